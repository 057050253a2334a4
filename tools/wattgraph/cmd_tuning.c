/* wattgraph --tuning: the library's tuning switches (core.h, "tuning
 * switches") with the values a context takes from this environment, their
 * defaults and the pages that explain them; --markdown writes the table of
 * docs/tuning.md, --json one object. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The refusal's message: the environment's value through the same check
 * on a scratch context. */
static void warn_rejected(const char *name) {
  wg_ctx_t *tmp = NULL;
  if (wg_ctx_create(&tmp) == WG_OK && wg_ctx_set_tuning(tmp, name, getenv(name)) != WG_OK)
    fprintf(stderr, "wattgraph: warning: %s; the default stays\n", wg_ctx_last_error(tmp));
  wg_ctx_destroy(&tmp);
}

/* A removed switch (the registry's list, docs/tuning.md "Removed") does
 * nothing: say so rather than let a run silently differ from what its user
 * asked. */
static void warn_removed(void) {
  for (int i = 0; wg_tuning_removed(i); i++) {
    const char *v = getenv(wg_tuning_removed(i));
    if (v && *v)
      fprintf(stderr,
              "wattgraph: warning: %s was removed with the variant it chose (docs/tuning.md, "
              "\"Removed\"); it has no effect\n",
              wg_tuning_removed(i));
  }
}

void cli_tuning_warnings(const wg_ctx_t *ctx) {
  warn_removed();
  for (int i = 0; i < wg_tuning_count(); i++) {
    wg_tuning_info in;
    wg_tuning_source src = WG_TUNING_DEFAULT;
    wg_tuning_info_at(i, &in);
    if (wg_ctx_get_tuning(ctx, in.name, NULL, 0, &src) == WG_OK && src == WG_TUNING_ENV_REJECTED)
      warn_rejected(in.name);
  }
}

int cmd_tuning(int argc, char **argv) {
  int json = 0, markdown = 0, quiet = 0;
  const cli_opt opts[] = {
      {"markdown", 0, OPT_FLAG, &markdown, NULL,
       "print the table as Markdown (docs/tuning.md is this output)", NULL, 0, 0, NULL},
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "--tuning", "[options]", "List the library's tuning switches.",
      "Each WG_* switch with this environment's value, its default, where the value\n"
      "came from (default, env, or env-rejected: the environment's value was refused\n"
      "and the default stays; the warning says why) and the page that explains it.\n"
      "Programs set them per context with wg_ctx_set_tuning(ctx, name, value).",
      opts, 0, 0};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (markdown) {
    const size_t len = wg_tuning_markdown(NULL, 0);
    char *buf = malloc(len + 1);
    if (!buf) {
      cli_error("out of memory");
      return CLI_FAIL;
    }
    wg_tuning_markdown(buf, len + 1);
    fputs(buf, stdout);
    free(buf);
    return CLI_OK;
  }
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  static const char *const from[] = {"default", "env", "set", "env-rejected"};
  const int n = wg_tuning_count();
  if (!quiet) warn_removed();
  cli_json j;
  if (json) {
    json_begin(&j, stdout);
    json_str(&j, "command", "tuning");
    json_arr_open(&j, "switches");
  } else {
    printf("%-26s %-10s %-10s %-12s %s\n", "switch", "value", "default", "from", "page");
  }
  for (int i = 0; i < n; i++) {
    wg_tuning_info in;
    char value[256];
    wg_tuning_source src = WG_TUNING_DEFAULT;
    wg_tuning_info_at(i, &in);
    wg_ctx_get_tuning(ctx, in.name, value, sizeof value, &src);
    if (src == WG_TUNING_ENV_REJECTED && !quiet) warn_rejected(in.name);
    if (json) {
      json_obj_open(&j, NULL);
      json_str(&j, "name", in.name);
      json_str(&j, "type", in.type);
      json_str(&j, "value", value);
      json_str(&j, "default", in.default_value);
      json_str(&j, "range", in.range);
      json_str(&j, "from", from[src]);
      json_str(&j, "doc", in.doc);
      json_str(&j, "what", in.what);
      json_str(&j, "why", in.why);
      json_obj_close(&j);
    } else {
      printf("%-26s %-10s %-10s %-12s %s\n", in.name, value[0] ? value : "-",
             in.default_value[0] ? in.default_value : "-", from[src], in.doc);
    }
  }
  if (json) {
    json_arr_close(&j);
    json_end(&j);
  } else {
    printf("\nSet one for a run with its environment variable (WG_CUDA_WIDE=1 wattgraph ...),\n"
           "in a program with wg_ctx_set_tuning; docs/tuning.md says what each does.\n");
  }
  wg_ctx_destroy(&ctx);
  return CLI_OK;
}
