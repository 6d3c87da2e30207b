/* Built with: gcc -Os -static -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables
   -Wl,--build-id=none -Wl,-n -s -o awl-nsenter-amd64 awl-nsenter.c && strip -R .comment awl-nsenter-amd64
   (x86-64 only: the system calls below are its numbers). */
/* awl-nsenter: joins the user, mount and PID namespaces whose descriptors
   are argv[1]..+2 (the working directory argv[1]+3), clears the bounding
   set while it holds the user namespace's capabilities, forks, and execs
   argv[2] with argv[2..] in the child; the parent exits as the child did. */
#define SYS_close 3
#define SYS_fchdir 81
#define SYS_prctl 157
#define SYS_setns 308
#define SYS_fork 57
#define SYS_execve 59
#define SYS_wait4 61
#define SYS_exit_group 231
#define SYS_kill 62
#define SYS_getpid 39
static long sc(long n, long a, long b, long c, long d) {
  long r; register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
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
  long pid = sc(SYS_fork, 0, 0, 0, 0);
  if (pid < 0) die(125);
  if (pid == 0) { sc(SYS_execve, (long)argv[2], (long)(argv + 2), (long)envp, 0); die(127); }
  int st = 0;
  while (sc(SYS_wait4, pid, (long)&st, 0, 0) == -4) {}
  if ((st & 0x7f) == 0) die((st >> 8) & 0xff);
  sc(SYS_kill, sc(SYS_getpid, 0, 0, 0, 0), st & 0x7f, 0, 0);
  die(128 + (st & 0x7f));
}
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call cmain\n hlt\n");
