/* Built, for x86-64 and (CC=aarch64-linux-gnu-gcc, STRIP=aarch64-linux-gnu-strip) arm64, with:
   $CC -Os -static -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables
   -Wl,--build-id=none -Wl,-n -s -o awl-nsenter-$GOARCH awl-nsenter.c && $STRIP -R .comment awl-nsenter-$GOARCH */
/* awl-nsenter: joins the user, mount and PID namespaces whose descriptors
   are argv[1]..+2 (the working directory argv[1]+3), clears the bounding
   set while it holds the user namespace's capabilities, forks, and execs
   argv[2] with argv[2..] in the child; the parent exits as the child did. */
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
__attribute__((used)) void cmain(long *sp) {
  long argc = sp[0]; char **argv = (char **)(sp + 1); char **envp = argv + argc + 1;
  if (argc < 3) die(126);
  long fd = 0; for (char *p = argv[1]; *p; p++) fd = fd * 10 + (*p - '0');
  if (sc(SYS_setns, fd, 0x10000000, 0, 0) < 0) die(125);
  if (sc(SYS_setns, fd + 1, 0x00020000, 0, 0) < 0) die(125);
  if (sc(SYS_setns, fd + 2, 0x20000000, 0, 0) < 0) die(125);
  if (sc(SYS_fchdir, fd + 3, 0, 0, 0) < 0) die(125);
  for (long i = 0; i < 4; i++) sc(SYS_close, fd + i, 0, 0, 0);
  for (long c = 0; c < 64; c++) if (sc(SYS_prctl, 24 /*PR_CAPBSET_DROP*/, c, 0, 0) == -22) break;
  long pid = sc(SYS_clone, 17 /* SIGCHLD: a fork */, 0, 0, 0);
  if (pid < 0) die(125);
  if (pid == 0) { sc(SYS_execve, (long)argv[2], (long)(argv + 2), (long)envp, 0); die(127); }
  int st = 0;
  while (sc(SYS_wait4, pid, (long)&st, 0, 0) == -4) {}
  if ((st & 0x7f) == 0) die((st >> 8) & 0xff);
  sc(SYS_kill, sc(SYS_getpid, 0, 0, 0, 0), st & 0x7f, 0, 0);
  die(128 + (st & 0x7f));
}
