// SPDX-License-Identifier: LGPL-2.1-or-later
// The system call side of starsiftd.service's sandbox, for running a program outside systemd.
//
// Loaded with LD_PRELOAD, its constructor installs a seccomp filter that lets through the system
// calls listed in STARSIFT_SANDBOX_ALLOW (numbers, from unit_syscalls.py: the unit's
// SystemCallFilter=) and applies the unit's other seccomp rules as systemd 252 builds them:
//   MemoryDenyWriteExecute=yes   mmap() writable and executable at once, mprotect() and
//                                pkey_mprotect() adding PROT_EXEC, shmat() with SHM_EXEC;
//   RestrictAddressFamilies=     socket() of a family other than AF_UNIX, AF_INET, AF_INET6,
//                                AF_NETLINK.
// Where systemd would make such a call fail (SystemCallErrorNumber=EPERM; EAFNOSUPPORT for an
// address family), this fails it the same way and also writes one line naming the call to the
// file STARSIFT_SANDBOX_LOG, so a test can say which call its program made (with
// STARSIFT_SANDBOX_BACKTRACE=1, the caller's stack too). A program it starts inherits the filter
// and loads this again for the logging. Without STARSIFT_SANDBOX_ALLOW it does nothing.
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "unit_seccomp_preload.c knows x86-64 system calls only"
#endif

enum { kMaxAllowed = 1024, kMaxProgram = 4096 };

static int log_fd = -1;
static int log_backtrace = 0;

// Async-signal-safe: one line "denied syscall NR arg0 ARG0 arg2 ARG2".
static void append_number(char** out, unsigned long long value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) *(*out)++ = digits[--n];
}

static void append_text(char** out, const char* text) {
  while (*text) *(*out)++ = *text++;
}

static void on_sigsys(int signal_number, siginfo_t* info, void* context) {
  (void)signal_number;
  ucontext_t* uc = (ucontext_t*)context;
  greg_t* regs = uc->uc_mcontext.gregs;
  if (log_fd >= 0) {
    char line[128];
    char* out = line;
    append_text(&out, "denied syscall ");
    append_number(&out, (unsigned long long)info->si_syscall);
    append_text(&out, " arg0 ");
    append_number(&out, (unsigned long long)regs[REG_RDI]);
    append_text(&out, " arg2 ");
    append_number(&out, (unsigned long long)regs[REG_RDX]);
    *out++ = '\n';
    ssize_t ignored = write(log_fd, line, (size_t)(out - line));
    (void)ignored;
    if (log_backtrace) {  // for finding the caller; backtrace() is not async-signal-safe
      void* frames[32];
      backtrace_symbols_fd(frames, backtrace(frames, 32), log_fd);
    }
  }
  regs[REG_RAX] = info->si_syscall == __NR_socket ? -EAFNOSUPPORT : -EPERM;
}

#define ARG_LOW(i) (offsetof(struct seccomp_data, args) + 8 * (i))

static struct sock_filter program[kMaxProgram];
static unsigned short length;

static void emit(struct sock_filter instruction) {
  if (length >= kMaxProgram) {
    fprintf(stderr, "unit_seccomp_preload: filter longer than %d instructions\n", kMaxProgram);
    _exit(125);
  }
  program[length++] = instruction;
}

// Calls number `nr` only when (arg & mask) != value: otherwise trapped.
static void emit_masked_rule(int nr, unsigned arg, unsigned mask, unsigned value) {
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5));
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(arg)));
  emit((struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask));
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

static void emit_socket_rule(void) {
  static const unsigned families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
  const unsigned count = sizeof families / sizeof families[0];
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 2 + 2 * count));
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(0)));
  for (unsigned i = 0; i < count; ++i) {
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, families[i], 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
}

// True when this process already runs under a seccomp filter: a child exec'd by a sandboxed
// program, which inherits the filter and only needs the SIGSYS handler again.
static int filter_inherited(void) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == NULL) return 0;
  char line[256];
  int mode = 0;
  while (fgets(line, sizeof line, status) != NULL)
    if (sscanf(line, "Seccomp: %d", &mode) == 1) break;
  fclose(status);
  return mode == SECCOMP_MODE_FILTER;
}

static int contains(const int* list, int count, int value) {
  for (int i = 0; i < count; ++i)
    if (list[i] == value) return 1;
  return 0;
}

__attribute__((constructor)) static void install_unit_sandbox(void) {
  const char* allow_text = getenv("STARSIFT_SANDBOX_ALLOW");
  if (allow_text == NULL || *allow_text == '\0') return;

  int allowed[kMaxAllowed];
  int count = 0;
  for (const char* p = allow_text; *p;) {
    char* end = NULL;
    long nr = strtol(p, &end, 10);
    if (end == p || count == kMaxAllowed) {
      fprintf(
          stderr,
          "unit_seccomp_preload: STARSIFT_SANDBOX_ALLOW must be comma-separated syscall numbers\n");
      _exit(125);
    }
    allowed[count++] = (int)nr;
    p = *end == ',' ? end + 1 : end;
  }

  const char* log_path = getenv("STARSIFT_SANDBOX_LOG");
  if (log_path != NULL && *log_path != '\0')
    log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const char* backtrace_text = getenv("STARSIFT_SANDBOX_BACKTRACE");
  log_backtrace = backtrace_text != NULL && strcmp(backtrace_text, "1") == 0;

  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSYS, &action, NULL);
  if (filter_inherited()) return;

  // SystemCallArchitectures=native.
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  // MemoryDenyWriteExecute=yes, each rule only for a call the allow list has at all.
  if (contains(allowed, count, __NR_mmap))
    emit_masked_rule(__NR_mmap, 2, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC);
  if (contains(allowed, count, __NR_mprotect))
    emit_masked_rule(__NR_mprotect, 2, PROT_EXEC, PROT_EXEC);
  if (contains(allowed, count, __NR_pkey_mprotect))
    emit_masked_rule(__NR_pkey_mprotect, 2, PROT_EXEC, PROT_EXEC);
  if (contains(allowed, count, __NR_shmat)) emit_masked_rule(__NR_shmat, 2, SHM_EXEC, SHM_EXEC);
  if (contains(allowed, count, __NR_socket)) emit_socket_rule();
  for (int i = 0; i < count; ++i) {
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i], 0, 1));
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));

  struct sock_fprog fprog = {.len = length, .filter = program};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) != 0) {
    fprintf(stderr, "unit_seccomp_preload: cannot install the seccomp filter: %s\n",
            strerror(errno));
    _exit(125);
  }
}
