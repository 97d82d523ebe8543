#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generates src/cuda/median/median_select_programs.inc: for each window size K and tile
width TW, the min/max program that turns the sorted columns of TW horizontally adjacent
windows into their TW medians.

The program (Adams 2021's separable idea, pruned as Sugy 2025 prunes by rank):
  1. Rank rows. For each rank i, the i-th smallest of every column is sorted across the
     window's K columns. The TW windows share columns, so the rows are built
     hierarchically: a group of adjacent outputs sorts the columns all its members share
     once, and each half of the group merges in only the columns it adds.
  2. Candidates. The matrix of sorted columns with sorted rows has element (i, j) >= the
     (i+1)(j+1) elements above-left of it and <= the (K-i)(K-j) below-right, so only the
     elements with both counts <= (K*K+1)/2 can be the median.
  3. Selection. The candidates of each row are already sorted: the runs are merged with
     Batcher odd-even merges (cheaper than sorting them) and the median is read off.
Dead operations (whose results never reach a median) are removed, and the values are
given slots by a linear scan, so the kernel's register array stays at the live set.

Each program is checked here against sorting on random and 0/1 inputs before it is
written. Run from the repository root: scripts/gen_median_networks.py
"""
import random
import sys

sys.setrecursionlimit(100000)

SIZES_TILES = [(3, 8), (3, 4), (3, 2), (5, 4), (5, 2), (7, 4), (7, 2), (9, 2), (9, 1),
               (11, 1), (13, 1), (15, 1)]


class Program:
    def __init__(self):
        self.ops = []  # (kind, a, b): kind 0 = min, 1 = max; value ids are SSA
        self.n_inputs = 0

    def input(self):
        self.n_inputs += 1
        return ('in', self.n_inputs - 1)

    def cas(self, x, y):
        self.ops.append((0, x, y))
        lo = ('op', len(self.ops) - 1)
        self.ops.append((1, x, y))
        hi = ('op', len(self.ops) - 1)
        return lo, hi


def batcher_pairs(n):
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            j = k % p
            while j <= n - 1 - k:
                for i in range(k):
                    if i > n - j - k - 1:
                        break
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
                j += 2 * k
            k //= 2
        p *= 2
    return pairs


def sort(prog, values):
    v = list(values)
    for a, b in batcher_pairs(len(v)):
        v[a], v[b] = prog.cas(v[a], v[b])
    return v


def merge(prog, a, b):
    """Batcher's odd-even merge of two sorted lists of any lengths."""
    if not a:
        return list(b)
    if not b:
        return list(a)
    if len(a) == 1 and len(b) == 1:
        return list(prog.cas(a[0], b[0]))
    even = merge(prog, a[0::2], b[0::2])
    odd = merge(prog, a[1::2], b[1::2])
    out = [even[0]]
    rest = even[1:]
    for k in range(max(len(rest), len(odd))):
        if k < len(odd) and k < len(rest):
            out += list(prog.cas(odd[k], rest[k]))
        elif k < len(odd):
            out.append(odd[k])
        else:
            out.append(rest[k])
    return out


def candidate(K, i, j):
    need = (K * K + 1) // 2
    return (i + 1) * (j + 1) <= need and (K - i) * (K - j) <= need


def below(K, i, j):
    return (K - i) * (K - j) > (K * K + 1) // 2


def build(K, TW):
    prog = Program()
    nc = TW + K - 1
    cols = [[prog.input() for _ in range(K)] for _ in range(nc)]  # input c*K + i
    rows = {}
    for i in range(K):
        def group(x0, n, parent, parent_range):
            lo, hi = x0 + n - 1, x0 + K  # columns every output of the group shares
            extra = [c for c in range(lo, hi) if not (parent_range[0] <= c < parent_range[1])]
            r = parent
            if extra:
                e = sort(prog, [cols[c][i] for c in extra])
                r = merge(prog, r, e) if r else e
            if n == 1:
                rows[(x0, i)] = r
                return
            h = n // 2
            group(x0, h, r, (lo, hi))
            group(x0 + h, n - h, r, (lo, hi))
        group(0, TW, [], (0, 0))
    pick = (K * K - 1) // 2 - sum(below(K, i, j) for i in range(K) for j in range(K))
    outs = []
    for x in range(TW):
        runs = [[rows[(x, i)][j] for j in range(K) if candidate(K, i, j)] for i in range(K)]
        runs = [r for r in runs if r]
        while len(runs) > 1:
            runs.sort(key=len)
            a, b = runs.pop(0), runs.pop(0)
            runs.append(merge(prog, a, b))
        outs.append(runs[0][pick])
    return prog, outs


def prune_and_allocate(prog, outs):
    """Drops dead ops, then gives every value a slot (linear scan over the straight line)."""
    needed = set()
    stack = [o for o in outs]
    while stack:
        v = stack.pop()
        if v in needed:
            continue
        needed.add(v)
        if v[0] == 'op':
            _, a, b = prog.ops[v[1]]
            stack += [a, b]
    live_ops = [k for k in range(len(prog.ops)) if ('op', k) in needed]
    last_use = {}
    for pos, k in enumerate(live_ops):
        _, a, b = prog.ops[k]
        last_use[a] = pos
        last_use[b] = pos
    for o in outs:
        last_use[o] = len(live_ops)
    slot = {}
    free = []
    n_slots = 0
    for idx in range(prog.n_inputs):  # inputs keep their natural slots
        slot[('in', idx)] = idx
    n_slots = prog.n_inputs
    for idx in range(prog.n_inputs):
        if ('in', idx) not in last_use:
            free.append(idx)
    code = []
    for pos, k in enumerate(live_ops):
        kind, a, b = prog.ops[k]
        sa, sb = slot[a], slot[b]
        for v in (a, b):
            if last_use.get(v) == pos and slot[v] not in free:
                free.append(slot[v])
        if free:
            free.sort()
            d = free.pop(0)
        else:
            d = n_slots
            n_slots += 1
        slot[('op', k)] = d
        code.append((kind, d, sa, sb))
    return code, [slot[o] for o in outs], n_slots


def run(code, outs, n_slots, inputs):
    v = list(inputs) + [0] * (n_slots - len(inputs))
    for kind, d, a, b in code:
        v[d] = max(v[a], v[b]) if kind else min(v[a], v[b])
    return [v[o] for o in outs]


def check(K, TW, code, outs, n_slots):
    rng = random.Random(K * 100 + TW)
    nc = TW + K - 1
    for trial in range(300):
        top = [1, 3, 1000][trial % 3]
        img = [[rng.randint(0, top) for _ in range(nc)] for _ in range(K)]
        cols = [sorted(img[r][c] for r in range(K)) for c in range(nc)]
        inputs = [cols[c][i] for c in range(nc) for i in range(K)]
        got = run(code, outs, n_slots, inputs)
        for x in range(TW):
            window = sorted(img[r][c] for r in range(K) for c in range(x, x + K))
            assert got[x] == window[len(window) // 2], (K, TW, trial)


def main():
    out = ['// SPDX-License-Identifier: LGPL-2.1-or-later',
           '// Generated by scripts/gen_median_networks.py; do not edit.',
           '// Min/max programs selecting the medians of TW adjacent KxK windows from their',
           '// sorted columns (input slot c*K + i: rank i of column c). Op: kind (0 min, 1 max),',
           '// destination slot, operand slots.',
           '']
    for K, TW in SIZES_TILES:
        prog, outs = build(K, TW)
        code, out_slots, n_slots = prune_and_allocate(prog, outs)
        check(K, TW, code, out_slots, n_slots)
        print(f'K={K} TW={TW}: {len(code)} ops ({len(code) / TW:.1f} per output), '
              f'{n_slots} slots', file=sys.stderr)
        name = f'SelectProgram<{K}, {TW}>'
        out.append('template <>')
        out.append(f'struct {name} {{')
        out.append(f'  static constexpr int kOps = {len(code)};')
        out.append(f'  static constexpr int kSlots = {n_slots};')
        out.append(f'  static constexpr std::uint16_t out[{TW}] = {{{", ".join(map(str, out_slots))}}};')
        for field, idx in (('kind', 0), ('dst', 1), ('a', 2), ('b', 3)):
            typ = 'std::uint8_t' if field == 'kind' else 'std::uint16_t'
            vals = ','.join(str(c[idx]) for c in code)
            out.append(f'  static constexpr {typ} {field}[{len(code)}] = {{{vals}}};')
        out.append('};')
        out.append('')
    with open('src/cuda/median/median_select_programs.inc', 'w') as f:
        f.write('\n'.join(out))


if __name__ == '__main__':
    main()
