# SPDX-License-Identifier: LGPL-2.1-or-later
# The landed rule for k (gauss_decimated.cu, axis_for()) through the model of the three passes
# (../../h200-strips/k3-model/decimated_model.py): a point source's worst error, of its peak,
# at sigmas across the rule's steps, the edges of each k among them.
import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
model = os.path.join(here, '..', '..', 'h200-strips', 'k3-model', 'decimated_model.py')
exec(open(model).read().split('for sigma,k in')[0])


def k_of(s):
    return max(3 if s >= 6 else 2, math.ceil(s / 4), min(math.floor(s / 2.5), 13))


for s in [4, 4.5, 5, 5.5, 5.99, 6, 6.5, 7, 7.5, 8, 8.5, 8.99, 9, 9.99, 10, 11, 12, 12.49, 12.5,
          15, 17.5, 20, 22.5, 25, 30, 32.5, 40, 50, 52]:
    k = k_of(s)
    n = int(max(200, 14 * s))
    o, e = model1d(n, n // 2 + 3, s, k)
    O, E = np.outer(o, o), np.outer(e, e)
    print(f"sigma {s:6} k {k:2} sigma/k {s / k:.2f}: point {np.abs(O - E).max() / E.max() * 100:.3f} %")
