/* Built, for x86-64 and (CC=aarch64-linux-gnu-gcc, STRIP=aarch64-linux-gnu-strip) arm64, with:
   $CC -Os -static -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables
   -Wl,--build-id=none -Wl,-n -s -o awl-nsenter-$GOARCH awl-nsenter.c && $STRIP -R .comment awl-nsenter-$GOARCH */
/* awl-nsenter FD KEEP PROGRAM ARGS...: joins the user, mount and PID
   namespaces whose descriptors are FD..FD+2, enters the working directory
   FD+3 and closes all four; then, while it holds every capability of the
   user namespace, clears from the bounding set each capability that is not
   in KEEP (a mask of capability numbers, in decimal) and makes KEEP its
   permitted and effective sets, the inheritable one empty (which empties
   the ambient one; joining the namespace had). It forks and execs PROGRAM
   with PROGRAM ARGS... in the child; the parent exits as the child did.
   awl passes KEEP 0 for a user who is not root; for root, the four
   capabilities it keeps, which exec as uid 0 gives back from the bounding
   set (and no_new_privs limits to the permitted one): no ambient set. */
#if defined(__x86_64__)
#define SYS_close 3
#define SYS_fchdir 81
#define SYS_prctl 157
#define SYS_setns 308
#define SYS_clone 56
#define SYS_execve 59
#define SYS_wait4 61
#define SYS_exit_group 231
#define SYS_kill 62
#define SYS_getpid 39
#define SYS_capset 126
static long sc(long n, long a, long b, long c, long d) {
  long r; register long r10 __asm__("r10") = d; register long r8 __asm__("r8") = 0;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return r;
}
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call cmain\n hlt\n");
#elif defined(__aarch64__)
#define SYS_close 57
#define SYS_fchdir 50
#define SYS_prctl 167
#define SYS_setns 268
#define SYS_clone 220
#define SYS_execve 221
#define SYS_wait4 260
#define SYS_exit_group 94
#define SYS_kill 129
#define SYS_getpid 172
#define SYS_capset 91
static long sc(long n, long a, long b, long c, long d) {
  register long x8 __asm__("x8") = n; register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b; register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d; register long x4 __asm__("x4") = 0;
  __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
}
__asm__(".globl _start\n_start:\n mov x0, sp\n bl cmain\n brk #0\n");
#else
#error "x86-64 and arm64 only"
#endif
static void die(long code) { for (;;) sc(SYS_exit_group, code, 0, 0, 0); }
static unsigned long num(const char *p) { unsigned long n = 0; for (; *p; p++) n = n * 10 + (*p - '0'); return n; }
__attribute__((used)) void cmain(long *sp) {
  long argc = sp[0]; char **argv = (char **)(sp + 1); char **envp = argv + argc + 1;
  if (argc < 4) die(126);
  long fd = num(argv[1]); unsigned long keep = num(argv[2]);
  if (sc(SYS_setns, fd, 0x10000000, 0, 0) < 0) die(125);
  if (sc(SYS_setns, fd + 1, 0x00020000, 0, 0) < 0) die(125);
  if (sc(SYS_setns, fd + 2, 0x20000000, 0, 0) < 0) die(125);
  if (sc(SYS_fchdir, fd + 3, 0, 0, 0) < 0) die(125);
  for (long i = 0; i < 4; i++) if (sc(SYS_close, fd + i, 0, 0, 0) < 0) die(125);
  for (long c = 0; c < 64; c++) {
    if (keep >> c & 1) continue;
    long r = sc(SYS_prctl, 24 /*PR_CAPBSET_DROP*/, c, 0, 0);
    if (r == -22) break; /* past the kernel's last capability */
    if (r < 0) die(125);
  }
  /* _LINUX_CAPABILITY_VERSION_3, this process; effective, permitted, inheritable for 0-31, then 32-63 */
  unsigned int hdr[2] = {0x20080522, 0};
  unsigned int data[6] = {(unsigned int)keep, (unsigned int)keep, 0, (unsigned int)(keep >> 32), (unsigned int)(keep >> 32), 0};
  if (sc(SYS_capset, (long)hdr, (long)data, 0, 0) < 0) die(125);
  long pid = sc(SYS_clone, 17 /* SIGCHLD: a fork */, 0, 0, 0);
  if (pid < 0) die(125);
  if (pid == 0) { sc(SYS_execve, (long)argv[3], (long)(argv + 3), (long)envp, 0); die(127); }
  int st = 0;
  while (sc(SYS_wait4, pid, (long)&st, 0, 0) == -4) {}
  if ((st & 0x7f) == 0) die((st >> 8) & 0xff);
  sc(SYS_kill, sc(SYS_getpid, 0, 0, 0, 0), st & 0x7f, 0, 0);
  die(128 + (st & 0x7f));
}
