/* For the fuzz targets over the command line's readers (tools/wattgraph):
 * its error printer, counted instead of printed (one target a program,
 * so the definition lives here). */
#ifndef WG_FUZZ_CLI_H
#define WG_FUZZ_CLI_H

#include "cli.h"

static int errors;

void cli_error(const char *fmt, ...) {
  (void)fmt;
  errors++;
}

#endif
