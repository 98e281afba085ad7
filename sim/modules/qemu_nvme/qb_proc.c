/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The QEMU child process of the bridge and QEMU's multiprocess ("x-remote", mpqemu) socket protocol:
 * a 16-byte header (int command, padding, 64-bit payload size) followed by the payload; file
 * descriptors travel as SCM_RIGHTS with the header. Every request gets a RET message (a 64-bit
 * value, none for a device reset). QEMU is started with its NVMe device on a raw image, a QMP
 * monitor on a socketpair (ready = the QMP greeting and "running": QEMU resets its machine after
 * the x-remote object is created, so earlier configuration writes would be lost), its output in a
 * log file, and PR_SET_PDEATHSIG so that it dies with the simulation. Every wait is bounded.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include "qemu_nvme.h"

enum { MP_SYNC_SYSMEM = 0, MP_RET = 1, MP_CFGWRITE = 2, MP_CFGREAD = 3, MP_BAR_WRITE = 4,
       MP_BAR_READ = 5, MP_SET_IRQFD = 6, MP_DEVICE_RESET = 7 };

#define MP_MAX_REGIONS 8

uint64_t qb_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- children to stop at exit ------------------------------------------------------------------- */

/* The LiteX simulation ends with exit() at $finish without closing its modules: stop (close the
 * channel, wait, kill) and reap every QEMU still running. A killed simulation takes QEMU with it
 * through PR_SET_PDEATHSIG. */
static qb_proc_t *children[64];
static int        atexit_done;

void qbp_kill_all(void)
{
    for (int i = 0; i < 64; i++) {
        qb_proc_t *p = children[i];
        if (p && p->pid > 0) {
            fprintf(stderr, "[qemu_nvme] stopping QEMU (pid %d) at exit\n", (int)p->pid);
            qbp_stop(p);
        }
        children[i] = NULL;
    }
}

static void track_child(qb_proc_t *p, int add)
{
    for (int i = 0; i < 64; i++) {
        if (add && !children[i]) { children[i] = p; break; }
        if (!add && children[i] == p) { children[i] = NULL; break; }
    }
    if (add && !atexit_done) { atexit(qbp_kill_all); atexit_done = 1; }
}

/* --- helpers -------------------------------------------------------------------------------------- */

int qbp_find_binary(const char *bin, char *path, size_t pathlen, char *err, size_t errlen)
{
    const char *name = bin && *bin ? bin : "qemu-system-x86_64";
    if (strchr(name, '/')) {
        if (access(name, X_OK) == 0) { snprintf(path, pathlen, "%s", name); return 0; }
        snprintf(err, errlen, "%s not found (or not executable): install the Debian package "
            "qemu-system-x86 or give the path of qemu-system-x86_64", name);
        return -1;
    }
    const char *pe = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", pe && *pe ? pe : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[1024];
        snprintf(cand, sizeof(cand), "%s/%s", *d ? d : ".", name);
        if (access(cand, X_OK) == 0) { snprintf(path, pathlen, "%s", cand); return 0; }
    }
    snprintf(err, errlen, "%s not found: install the Debian package qemu-system-x86", name);
    return -1;
}

static void set_dead(qb_proc_t *p, const char *fmt, const char *what)
{
    if (!p->dead) {
        snprintf(p->why, sizeof(p->why), fmt, what);
        p->dead = 1;
    }
}

void qbp_log_tail(const qb_proc_t *p, char *out, size_t n, int oneline)
{
    out[0] = 0;
    int fd = open(p->log_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    off_t end = lseek(fd, 0, SEEK_END);
    size_t want = n - 1;
    off_t start = end > (off_t)want ? end - (off_t)want : 0;
    ssize_t r = pread(fd, out, (size_t)(end - start), start);
    close(fd);
    if (r < 0) r = 0;
    out[r] = 0;
    /* start at a line boundary; not the bridge's own first line (the command line) */
    char *nl = start > 0 ? strchr(out, '\n') : NULL;
    if (nl) memmove(out, nl + 1, strlen(nl + 1) + 1);
    if (!strncmp(out, "# started by", 12)) {
        nl = strchr(out, '\n');
        if (nl) memmove(out, nl + 1, strlen(nl + 1) + 1); else out[0] = 0;
    }
    size_t l = strlen(out);
    while (l && (out[l - 1] == '\n' || out[l - 1] == '\r')) out[--l] = 0;
    if (oneline) {
        char tmp[4096];
        size_t o = 0;
        for (size_t i = 0; out[i] && o + 4 < sizeof(tmp); i++) {
            if (out[i] == '\n') { memcpy(tmp + o, " | ", 3); o += 3; }
            else if (out[i] != '\r') tmp[o++] = out[i];
        }
        tmp[o] = 0;
        snprintf(out, n, "%s", tmp);
    }
}

/* Wait for fd to become readable until deadline (ns); 1 ready, 0 timeout, -1 error. */
static int wait_readable(int fd, uint64_t deadline)
{
    for (;;) {
        uint64_t now = qb_wall_ns();
        if (now >= deadline) return 0;
        int ms = (int)((deadline - now + 999999) / 1000000);
        struct pollfd pf = { fd, POLLIN, 0 };
        int r = poll(&pf, 1, ms);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

static int read_full(int fd, void *buf, size_t n, uint64_t deadline)
{
    uint8_t *b = buf;
    size_t got = 0;
    while (got < n) {
        int w = wait_readable(fd, deadline);
        if (w <= 0) return w == 0 ? -2 : -1;
        ssize_t r = read(fd, b + got, n - got);
        if (r == 0) return -1;
        if (r < 0) { if (errno == EINTR || errno == EAGAIN) continue; return -1; }
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const uint8_t *b = buf;
    while (n) {
        ssize_t r = send(fd, b, n, MSG_NOSIGNAL);
        if (r < 0) { if (errno == EINTR || errno == EAGAIN) continue; return -1; }
        b += r; n -= (size_t)r;
    }
    return 0;
}

static const char *cmd_name(int cmd)
{
    static const char *n[] = { "SYNC_SYSMEM", "RET", "PCI_CFGWRITE", "PCI_CFGREAD", "BAR_WRITE",
        "BAR_READ", "SET_IRQFD", "DEVICE_RESET" };
    return cmd >= 0 && cmd <= 7 ? n[cmd] : "?";
}

/* One request and its RET. Returns 0 and *ret, or -1 (QEMU gone/timeout: p->dead, p->why). */
static int request(qb_proc_t *p, int cmd, const void *data, size_t size, const int *fds, int nfds,
    uint64_t *ret)
{
    if (p->dead || p->sock < 0) return -1;
    uint8_t msg[16 + 256];
    int32_t c = cmd, pad = 0;
    uint64_t sz = size;
    memcpy(msg, &c, 4); memcpy(msg + 4, &pad, 4); memcpy(msg + 8, &sz, 8);
    if (size) memcpy(msg + 16, data, size);
    struct iovec iov = { msg, 16 + size };
    struct msghdr mh;
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    union { char buf[CMSG_SPACE(sizeof(int) * MP_MAX_REGIONS)]; struct cmsghdr align; } ctl;
    if (nfds) {
        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t r;
    do r = sendmsg(p->sock, &mh, MSG_NOSIGNAL); while (r < 0 && errno == EINTR);
    if (r < 0 || ((size_t)r < 16 + size && write_full(p->sock, msg + r, 16 + size - (size_t)r))) {
        p->sock_closed = 1;
        set_dead(p, "the QEMU channel is closed (sending %s): QEMU exited", cmd_name(cmd));
        return -1;
    }
    p->requests++;
    uint64_t deadline = qb_wall_ns() + (uint64_t)(p->io_timeout_ms * 1e6);
    uint8_t hdr[16];
    int rr = read_full(p->sock, hdr, 16, deadline);
    if (rr == 0) {
        uint64_t rsz;
        int32_t rc;
        memcpy(&rc, hdr, 4); memcpy(&rsz, hdr + 8, 8);
        uint8_t body[64] = {0};
        if (rsz > sizeof(body)) { set_dead(p, "QEMU answered %s with an oversized message", cmd_name(cmd)); return -1; }
        if (rsz) rr = read_full(p->sock, body, rsz, deadline);
        if (rr == 0) {
            if (rc != MP_RET) { set_dead(p, "QEMU answered %s with an unexpected message", cmd_name(cmd)); return -1; }
            uint64_t v = 0;
            if (rsz >= 8) memcpy(&v, body, 8);
            if (ret) *ret = v;
            return 0;
        }
    }
    if (rr == -2) {
        char w[64];
        snprintf(w, sizeof(w), "%s", cmd_name(cmd));
        snprintf(p->why, sizeof(p->why), "QEMU did not answer a %s request within %.0f ms "
            "(qemu_timeout)", w, p->io_timeout_ms);
        p->dead = 1;
    } else {
        p->sock_closed = 1;
        set_dead(p, "the QEMU channel closed while waiting for the answer to %s: QEMU exited", cmd_name(cmd));
    }
    return -1;
}

int qbp_cfg_read(qb_proc_t *p, unsigned addr, unsigned len, uint32_t *val)
{
    uint8_t m[12] = {0};
    uint32_t a = addr, v = 0;
    int32_t l = (int32_t)len;
    memcpy(m, &a, 4); memcpy(m + 4, &v, 4); memcpy(m + 8, &l, 4);
    uint64_t r;
    if (request(p, MP_CFGREAD, m, 12, NULL, 0, &r)) return -1;
    *val = (uint32_t)r;
    return 0;
}

int qbp_cfg_write(qb_proc_t *p, unsigned addr, uint32_t val, unsigned len)
{
    uint8_t m[12];
    uint32_t a = addr;
    int32_t l = (int32_t)len;
    memcpy(m, &a, 4); memcpy(m + 4, &val, 4); memcpy(m + 8, &l, 4);
    uint64_t r;
    return request(p, MP_CFGWRITE, m, 12, NULL, 0, &r);
}

static int bar_access(qb_proc_t *p, int write, uint64_t addr, uint64_t *val, unsigned size)
{
    uint8_t m[24] = {0};
    uint64_t v = write ? *val : 0;
    uint32_t s = size;
    memcpy(m, &addr, 8); memcpy(m + 8, &v, 8); memcpy(m + 16, &s, 4);
    m[20] = 1;                                   /* memory space */
    uint64_t r;
    if (request(p, write ? MP_BAR_WRITE : MP_BAR_READ, m, 24, NULL, 0, &r)) return -1;
    if (!write) *val = r;
    return 0;
}

int qbp_mem_read(qb_proc_t *p, uint64_t addr, unsigned size, uint64_t *val) { return bar_access(p, 0, addr, val, size); }
int qbp_mem_write(qb_proc_t *p, uint64_t addr, uint64_t val, unsigned size) { return bar_access(p, 1, addr, &val, size); }
int qbp_device_reset(qb_proc_t *p) { return request(p, MP_DEVICE_RESET, NULL, 0, NULL, 0, NULL); }

int qbp_alive(qb_proc_t *p)
{
    if (p->pid <= 0) return 0;
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == 0 && p->dead && p->sock_closed) {
        /* the channel closed: QEMU is exiting; reap it (bounded) */
        uint64_t deadline = qb_wall_ns() + 1000000000ull;
        while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && qb_wall_ns() < deadline) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    }
    if (r == p->pid) {
        track_child(p, 0);
        p->pid = -1;
        p->exit_status = st;
        char w[96];
        if (WIFSIGNALED(st)) snprintf(w, sizeof(w), "killed by signal %d", WTERMSIG(st));
        else snprintf(w, sizeof(w), "exit status %d", WEXITSTATUS(st));
        set_dead(p, "QEMU exited (%s)", w);
        return 0;
    }
    return !p->dead;
}

/* --- QMP readiness --------------------------------------------------------------------------------- */

/* Read one line (QMP messages are one JSON object per line). */
static int qmp_line(int fd, char *buf, size_t n, uint64_t deadline)
{
    size_t len = 0;
    while (len + 1 < n) {
        char ch;
        int r = read_full(fd, &ch, 1, deadline);
        if (r) return r;
        if (ch == '\n') break;
        buf[len++] = ch;
    }
    buf[len] = 0;
    return 0;
}

static int qmp_cmd(int fd, const char *cmd, char *reply, size_t n, uint64_t deadline)
{
    if (write_full(fd, cmd, strlen(cmd))) return -1;
    for (;;) {
        int r = qmp_line(fd, reply, n, deadline);
        if (r) return r;
        if (strstr(reply, "\"return\"") || strstr(reply, "\"error\"")) return 0;   /* skip events */
    }
}

/* --- start / stop ---------------------------------------------------------------------------------- */

static int prepare_image(const qb_conf_t *c, char *err, size_t errlen)
{
    struct stat st;
    if (stat(c->image, &st) == 0) {
        if (!S_ISREG(st.st_mode)) { snprintf(err, errlen, "image %s is not a regular file", c->image); return -1; }
        if (c->image_size && (uint64_t)st.st_size != c->image_size) {
            snprintf(err, errlen, "image %s exists with %lld bytes, not the requested %llu "
                "(remove it or ask for its size)", c->image, (long long)st.st_size,
                (unsigned long long)c->image_size);
            return -1;
        }
        if (st.st_size == 0 || (uint64_t)st.st_size % c->lba_size) {
            snprintf(err, errlen, "image %s: %lld bytes is not a positive multiple of the LBA size %u",
                c->image, (long long)st.st_size, c->lba_size);
            return -1;
        }
        return 0;
    }
    if (!c->image_size) { snprintf(err, errlen, "image %s does not exist and no size was given", c->image); return -1; }
    int fd = open(c->image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)c->image_size)) {
        snprintf(err, errlen, "cannot create the image %s: %s", c->image, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int qbp_start(qb_proc_t *p, const qb_conf_t *c, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->pid = -1; p->sock = p->qmp = p->memfd = -1; p->irqfd[0] = p->irqfd[1] = -1;
    p->io_timeout_ms = c->io_timeout_ms;
    snprintf(p->log_path, sizeof(p->log_path), "%s", c->log_path);
    char bin[1024];
    if (qbp_find_binary(c->qemu_bin, bin, sizeof(bin), err, errlen)) return -1;
    if (prepare_image(c, err, errlen)) return -1;

    int logfd = open(c->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0) { snprintf(err, errlen, "cannot create the QEMU log %s: %s", c->log_path, strerror(errno)); return -1; }
    int sv[2], qv[2], ep[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) { close(logfd); snprintf(err, errlen, "socketpair: %s", strerror(errno)); return -1; }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qv)) { close(logfd); close(sv[0]); close(sv[1]); snprintf(err, errlen, "socketpair: %s", strerror(errno)); return -1; }
    if (pipe2(ep, O_CLOEXEC)) { close(logfd); close(sv[0]); close(sv[1]); close(qv[0]); close(qv[1]); snprintf(err, errlen, "pipe: %s", strerror(errno)); return -1; }

    char dev[512], drive[1700];
    snprintf(dev, sizeof(dev), "nvme,id=nvme0,serial=%s,drive=d0,max_ioqpairs=%u,mdts=%u,"
        "logical_block_size=%u,physical_block_size=%u", c->serial, c->max_ioqpairs, c->mdts,
        c->lba_size, c->lba_size);
    snprintf(drive, sizeof(drive), "id=d0,if=none,file=%s,format=raw,discard=unmap%s%s", c->image,
        c->drive_opts[0] ? "," : "", c->drive_opts);
    if (strchr(c->image, ',')) {
        snprintf(err, errlen, "image path %s contains a ',' (not allowed in QEMU's -drive option)", c->image);
        close(logfd); close(sv[0]); close(sv[1]); close(qv[0]); close(qv[1]); close(ep[0]); close(ep[1]);
        return -1;
    }
    char *argv[] = { bin, "-machine", "x-remote", "-nodefaults", "-no-user-config", "-display", "none",
        "-device", dev, "-drive", drive,
        "-chardev", "socket,id=qmp0,fd=4", "-mon", "chardev=qmp0,mode=control",
        "-object", "x-remote-object,id=robj0,devid=nvme0,fd=3", NULL };
    if (c->verbose) {
        fprintf(stderr, "[qemu_nvme%d] starting:", c->index);
        for (int i = 0; argv[i]; i++) fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
    }
    {   /* the command line, at the top of the log */
        char line[4096];
        size_t o = (size_t)snprintf(line, sizeof(line), "# started by the LiteRecorder QEMU NVMe bridge:");
        for (int i = 0; argv[i] && o < sizeof(line) - 2; i++)
            o += (size_t)snprintf(line + o, sizeof(line) - o, " %s", argv[i]);
        if (o > sizeof(line) - 2) o = sizeof(line) - 2;
        line[o++] = '\n';
        if (write(logfd, line, o) < 0) { /* the log is best effort */ }
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(logfd); close(sv[0]); close(sv[1]); close(qv[0]); close(qv[1]); close(ep[0]); close(ep[1]);
        return -1;
    }
    if (pid == 0) {
        /* child: die with the simulation, fds 0-4 = null, log, log, mpqemu, qmp */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_DFL);
        int a = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), q = fcntl(qv[1], F_DUPFD_CLOEXEC, 10);
        int l = fcntl(logfd, F_DUPFD_CLOEXEC, 10), e = fcntl(ep[1], F_DUPFD_CLOEXEC, 10);
        int nul = open("/dev/null", O_RDONLY);
        if (a < 0 || q < 0 || l < 0 || e < 0 || nul < 0) _exit(127);
        if (dup2(nul, 0) < 0 || dup2(l, 1) < 0 || dup2(l, 2) < 0 || dup2(a, 3) < 0 || dup2(q, 4) < 0 ||
            dup2(e, 5) < 0 || fcntl(5, F_SETFD, FD_CLOEXEC) < 0) {
            int er = errno;
            if (write(e, &er, sizeof(er)) < 0) { /* nothing to do */ }
            _exit(127);
        }
        e = 5;
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 6u, ~0u, 0u) < 0)
#endif
        {
            long maxfd = sysconf(_SC_OPEN_MAX);
            for (long fd = 6; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++) close((int)fd);
        }
        execv(bin, argv);
        int er = errno;
        if (write(e, &er, sizeof(er)) < 0) { /* nothing to do */ }
        _exit(127);
    }
    close(logfd); close(sv[1]); close(qv[1]); close(ep[1]);
    p->pid = pid;
    p->sock = sv[0];
    p->qmp = qv[0];
    track_child(p, 1);
    int er = 0;
    ssize_t n;
    do n = read(ep[0], &er, sizeof(er)); while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t)sizeof(er)) {
        snprintf(err, errlen, "cannot execute %s: %s", bin, strerror(er));
        qbp_stop(p);
        return -1;
    }
    /* QMP: greeting, capabilities, status "running" (the machine reset is done) */
    uint64_t deadline = qb_wall_ns() + (uint64_t)(c->start_timeout_ms * 1e6);
    char line[4096];
    int r = qmp_line(p->qmp, line, sizeof(line), deadline);
    if (!r && !strstr(line, "\"QMP\"")) r = -1;
    if (!r) r = qmp_cmd(p->qmp, "{\"execute\": \"qmp_capabilities\"}\n", line, sizeof(line), deadline);
    if (!r) r = qmp_cmd(p->qmp, "{\"execute\": \"query-status\"}\n", line, sizeof(line), deadline);
    if (!r && !strstr(line, "\"running\"")) r = -1;
    if (r) {
        char tail[1024];
        if (r == -2) snprintf(err, errlen, "QEMU did not become ready within %.0f ms (start_timeout)", c->start_timeout_ms);
        else {
            qbp_stop(p);
            qbp_log_tail(p, tail, sizeof(tail), 1);
            snprintf(err, errlen, "QEMU failed to start (log %s): %s", c->log_path, tail[0] ? tail : "no output");
            return -1;
        }
        qbp_stop(p);
        return -1;
    }
    /* host memory: one shared file mapped at address 0 of QEMU's system memory */
    p->mem_size = c->mem_top;
    p->memfd = memfd_create("literec-qemu-hostmem", MFD_CLOEXEC);
    if (p->memfd < 0 || ftruncate(p->memfd, (off_t)p->mem_size)) {
        snprintf(err, errlen, "shared memory of %llu bytes: %s", (unsigned long long)p->mem_size, strerror(errno));
        qbp_stop(p);
        return -1;
    }
    p->mem = mmap(NULL, p->mem_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, p->memfd, 0);
    if (p->mem == MAP_FAILED) {
        p->mem = NULL;
        snprintf(err, errlen, "mmap of the shared memory: %s", strerror(errno));
        qbp_stop(p);
        return -1;
    }
    uint8_t sm[3 * 8 * MP_MAX_REGIONS];
    memset(sm, 0, sizeof(sm));
    uint64_t gpa = 0, size = p->mem_size;
    int64_t off = 0;
    memcpy(sm, &gpa, 8); memcpy(sm + 64, &size, 8); memcpy(sm + 128, &off, 8);
    /* SYNC_SYSMEM has no RET: QEMU just maps the regions */
    {
        int32_t cmd = MP_SYNC_SYSMEM, pad = 0;
        uint64_t sz = sizeof(sm);
        uint8_t msg[16 + sizeof(sm)];
        memcpy(msg, &cmd, 4); memcpy(msg + 4, &pad, 4); memcpy(msg + 8, &sz, 8); memcpy(msg + 16, sm, sizeof(sm));
        struct iovec iov = { msg, sizeof(msg) };
        union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
        memset(&ctl, 0, sizeof(ctl));
        struct msghdr mh;
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = &iov; mh.msg_iovlen = 1; mh.msg_control = ctl.buf; mh.msg_controllen = sizeof(ctl.buf);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &p->memfd, sizeof(int));
        if (sendmsg(p->sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(msg)) {
            snprintf(err, errlen, "sending the host memory to QEMU: %s", strerror(errno));
            qbp_stop(p);
            return -1;
        }
        /* SET_IRQFD (INTx) has no RET either */
        p->irqfd[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        p->irqfd[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        cmd = MP_SET_IRQFD; sz = 0;
        memcpy(msg, &cmd, 4); memcpy(msg + 8, &sz, 8);
        iov.iov_len = 16;
        memset(&ctl, 0, sizeof(ctl));
        union { char buf[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } ctl2;
        memset(&ctl2, 0, sizeof(ctl2));
        mh.msg_control = ctl2.buf; mh.msg_controllen = sizeof(ctl2.buf);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
        memcpy(CMSG_DATA(cm), p->irqfd, 2 * sizeof(int));
        if (p->irqfd[0] < 0 || p->irqfd[1] < 0 || sendmsg(p->sock, &mh, MSG_NOSIGNAL) != 16) {
            snprintf(err, errlen, "sending the INTx eventfds to QEMU: %s", strerror(errno));
            qbp_stop(p);
            return -1;
        }
    }
    return 0;
}

void qbp_stop(qb_proc_t *p)
{
    if (p->sock >= 0) { close(p->sock); p->sock = -1; }
    if (p->qmp >= 0) { close(p->qmp); p->qmp = -1; }
    if (p->pid > 0) {
        /* closing the channel makes QEMU shut down; give it 2 s, then kill */
        uint64_t deadline = qb_wall_ns() + 2000000000ull;
        int st = 0;
        pid_t r = 0;
        while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && qb_wall_ns() < deadline) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
        if (r == 0) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
        }
        p->exit_status = st;
        track_child(p, 0);
        p->pid = -1;
    }
    if (p->mem) { munmap(p->mem, p->mem_size); p->mem = NULL; }
    if (p->memfd >= 0) { close(p->memfd); p->memfd = -1; }
    for (int i = 0; i < 2; i++) if (p->irqfd[i] >= 0) { close(p->irqfd[i]); p->irqfd[i] = -1; }
    if (!p->dead) { p->dead = 1; snprintf(p->why, sizeof(p->why), "QEMU was stopped"); }
}
