/* Status codes: messages and names generated from WG_STATUS_TABLE. */
#include "wattgraph/core.h"

#define WG__VERSION "0.1.0"

const char *wg_strerror(wg_status status) {
  switch (status) {
#define WG__STATUS_MSG(name, value, msg) \
  case name:                             \
    return msg;
    WG_STATUS_TABLE(WG__STATUS_MSG)
#undef WG__STATUS_MSG
  default:
    return "unknown status";
  }
}

const char *wg_status_name(wg_status status) {
  switch (status) {
#define WG__STATUS_NAME(name, value, msg) \
  case name:                              \
    return #name;
    WG_STATUS_TABLE(WG__STATUS_NAME)
#undef WG__STATUS_NAME
  default:
    return "WG_EUNKNOWN";
  }
}

const char *wg_version(void) { return WG__VERSION; }
