/* evhttp_refuse: what a refusal costs in libevent's evhttp loop (issue 23,
 * before porting the route server's HTTP front to it). N threads, each with
 * its own event_base and evhttp on one shared port (SO_REUSEPORT listeners,
 * the kernel spreads connections), answer every request as the server's
 * admission control refuses one: 503, Retry-After: 1, a small static JSON
 * body, keep-alive. At SIGTERM or SIGINT it prints the requests it served
 * (stdout, "requests N"), so that a driver can divide the process's CPU by
 * them (bench/evhttp_refuse.sh).
 *
 *   evhttp_refuse [--port 5077] [--host 127.0.0.1] [--threads 1]
 *                 [--timeout-s 10]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

static const char k_body[] =
    "{\"code\":\"Overloaded\",\"message\":\"the server is at capacity; retry later\"}";

static atomic_ulong g_requests;

static void on_request(struct evhttp_request *req, void *arg) {
  (void)arg;
  struct evkeyvalq *h = evhttp_request_get_output_headers(req);
  evhttp_add_header(h, "Content-Type", "application/json");
  evhttp_add_header(h, "Retry-After", "1");
  struct evbuffer *b = evbuffer_new();
  /* by reference: the body is static, as the server's refusal body is */
  if (b) evbuffer_add_reference(b, k_body, sizeof k_body - 1, NULL, NULL);
  evhttp_send_reply(req, 503, "Service Unavailable", b);
  if (b) evbuffer_free(b);
  atomic_fetch_add_explicit(&g_requests, 1, memory_order_relaxed);
}

typedef struct loop {
  struct event_base *base;
  struct evhttp *http;
  pthread_t tid;
} loop;

static int listen_fd(const char *host, unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  /* every thread binds the same port; the kernel spreads the connections */
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    close(fd);
    return -1;
  }
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
      bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4096) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void *run_loop(void *arg) {
  loop *l = arg;
  event_base_dispatch(l->base);
  return NULL;
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1";
  unsigned port = 5077, threads = 1, timeout_s = 10;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--port") && v) port = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--host") && v) host = argv[++i];
    else if (!strcmp(argv[i], "--threads") && v) threads = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--timeout-s") && v) timeout_s = (unsigned)strtoul(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: evhttp_refuse [--port P] [--host A] [--threads N] [--timeout-s S]\n");
      return 2;
    }
  }
  if (threads == 0 || threads > 256) {
    fprintf(stderr, "evhttp_refuse: --threads must be in 1..256\n");
    return 2;
  }
  /* the signals go to sigwait below, never to a loop thread */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  loop *loops = calloc(threads, sizeof *loops);
  if (!loops) return 1;
  for (unsigned t = 0; t < threads; t++) {
    int fd = listen_fd(host, port);
    if (fd < 0) {
      fprintf(stderr, "evhttp_refuse: cannot listen on %s:%u: %s\n", host, port, strerror(errno));
      return 1;
    }
    loops[t].base = event_base_new();
    loops[t].http = loops[t].base ? evhttp_new(loops[t].base) : NULL;
    if (!loops[t].http || evhttp_accept_socket(loops[t].http, fd) != 0) {
      fprintf(stderr, "evhttp_refuse: libevent setup failed\n");
      return 1;
    }
    evhttp_set_timeout(loops[t].http, (int)timeout_s);
    evhttp_set_gencb(loops[t].http, on_request, NULL);
    if (pthread_create(&loops[t].tid, NULL, run_loop, &loops[t]) != 0) {
      fprintf(stderr, "evhttp_refuse: cannot start a thread\n");
      return 1;
    }
  }
  int sig = 0;
  sigwait(&set, &sig);
  printf("requests %lu\n", (unsigned long)atomic_load(&g_requests));
  fflush(stdout);
  /* the loops hold no state worth a clean shutdown: the count is out */
  _exit(0);
}
