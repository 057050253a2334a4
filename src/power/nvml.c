/* GPU meters through NVML, opened at run time.
 *
 * libnvidia-ml.so.1 ships with the driver, not the toolkit, and no NVML
 * header is installed here, so the few entry points are declared by hand
 * (power_internal.h) and looked up with dlsym: the library then builds and
 * runs on machines without a driver, where the GPU reading says why it is
 * unavailable. RTLD_LOCAL keeps NVML's symbols out of the global namespace.
 *
 * Per device the energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ
 * since the driver loaded, Volta and newer) is preferred: a window is then
 * two reads and exact to 1 mJ. Older GPUs answer NVML_ERROR_NOT_SUPPORTED;
 * those fall back to integrating power samples (nvmlDeviceGetPowerUsage,
 * mW) over the window with the trapezoid rule. Without the sampler that is
 * only the two end points, so the name says "(power-integrated)" to warn
 * the reader. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "power/power_internal.h"

static const char *nvml_err(const wg__nvml *nv, int ret, char *buf, size_t cap) {
  const char *s = nv->api.error_string ? nv->api.error_string(ret) : NULL;
  if (s && *s) return s;
  wg__fmt(buf, cap, "NVML error %d", ret);
  return buf;
}

void wg__nvml_close(wg__nvml *nv) {
  if (!nv) return;
  if (nv->inited && nv->api.shutdown) nv->api.shutdown();
  nv->inited = 0;
  if (nv->lib) dlclose(nv->lib);
  nv->lib = NULL;
  memset(&nv->api, 0, sizeof nv->api);
}

/* Looks up every entry point; 0, or -1 with the missing name in why. */
static int load_symbols(wg__nvml *nv, const char *library, char *why, size_t cap) {
  static const struct {
    const char *name;
    size_t offset;
  } syms[] = {
      {"nvmlInit_v2", offsetof(wg__nvml_api, init)},
      {"nvmlShutdown", offsetof(wg__nvml_api, shutdown)},
      {"nvmlDeviceGetCount_v2", offsetof(wg__nvml_api, get_count)},
      {"nvmlDeviceGetHandleByIndex_v2", offsetof(wg__nvml_api, get_handle)},
      {"nvmlDeviceGetName", offsetof(wg__nvml_api, get_name)},
      {"nvmlDeviceGetTotalEnergyConsumption", offsetof(wg__nvml_api, get_energy)},
      {"nvmlDeviceGetPowerUsage", offsetof(wg__nvml_api, get_power)},
      {"nvmlErrorString", offsetof(wg__nvml_api, error_string)},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *p = dlsym(nv->lib, syms[i].name);
    if (!p) {
      wg__fmt(why, cap, "NVML in %s lacks %s", library, syms[i].name);
      return -1;
    }
    /* POSIX guarantees a data pointer from dlsym converts to a function
     * pointer; copy the bytes so the compiler sees no such cast. */
    memcpy((char *)&nv->api + syms[i].offset, &p, sizeof p);
  }
  return 0;
}

/* Opens the library or takes the fake table and calls nvmlInit. 0, or -1
 * with the reason (and everything closed again). */
static int open_nvml(wg__nvml *nv, const char *library, const wg__nvml_api *fake,
                     char *why, size_t cap) {
  char eb[32];
  if (fake) {
    nv->api = *fake;
  } else {
    nv->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
      const char *e = dlerror();
      if (!e) e = "unknown dlopen error";
      /* dlerror usually starts with the library's name already */
      if (strncmp(e, library, strlen(library)) == 0)
        wg__fmt(why, cap, "NVML not found (%s)", e);
      else
        wg__fmt(why, cap, "NVML not found (%s: %s)", library, e);
      return -1;
    }
    if (load_symbols(nv, library, why, cap) != 0) goto fail;
  }
  if (!nv->api.init || !nv->api.get_count || !nv->api.get_handle) {
    wg__fmt(why, cap, "NVML table incomplete");
    goto fail;
  }
  int ret = nv->api.init();
  if (ret != WG__NVML_SUCCESS) {
    wg__fmt(why, cap, "nvmlInit failed: %s", nvml_err(nv, ret, eb, sizeof eb));
    goto fail;
  }
  nv->inited = 1;
  return 0;
fail:
  wg__nvml_close(nv);
  return -1;
}

/* "gpuI MODEL SUFFIX" in the 64-byte name, shortening the model (not the
 * suffix) when it does not fit. */
static void compose_name(char *dst, size_t cap, unsigned i, const char *model,
                         const char *suffix) {
  char head[16];
  wg__fmt(head, sizeof head, "gpu%u", i);
  size_t h = strlen(head), sl = strlen(suffix), ml = strlen(model);
  size_t room = cap - 1 - h - sl - (ml ? 1 : 0);
  if (h + sl + 2 >= cap) room = 0;
  if (ml > room) ml = room;
  size_t k = 0;
  memcpy(dst, head, h);
  k = h;
  if (ml) {
    dst[k++] = ' ';
    memcpy(dst + k, model, ml);
    k += ml;
  }
  memcpy(dst + k, suffix, sl);
  dst[k + sl] = '\0';
}

wg_status wg__nvml_discover(wg_meter_t *m, const char *library,
                            const wg__nvml_api *fake) {
  wg__nvml *nv = &m->nvml;
  char why[160], eb[32];
  unsigned int count = 0;
  int usable = 0, ret;
  wg_status st = WG_OK;
  if (open_nvml(nv, library, fake, why, sizeof why) != 0)
    return wg__meter_add_unavailable(m, WG_METER_GPU, "gpu", why);
  ret = nv->api.get_count(&count);
  if (ret != WG__NVML_SUCCESS || count == 0) {
    if (ret != WG__NVML_SUCCESS)
      wg__fmt(why, sizeof why, "nvmlDeviceGetCount failed: %s",
               nvml_err(nv, ret, eb, sizeof eb));
    else
      wg__fmt(why, sizeof why, "no NVIDIA GPU");
    wg__nvml_close(nv);
    return wg__meter_add_unavailable(m, WG_METER_GPU, "gpu", why);
  }
  for (unsigned int i = 0; i < count && st == WG_OK; i++) {
    wg__source s;
    char model[96] = "", eb2[32];
    memset(&s, 0, sizeof s);
    s.kind = WG_METER_GPU;
    wg__fmt(s.name, sizeof s.name, "gpu%u", i);
    ret = nv->api.get_handle(i, &s.dev);
    if (ret != WG__NVML_SUCCESS) {
      wg__fmt(s.why, sizeof s.why, "nvmlDeviceGetHandleByIndex(%u) failed: %s", i,
               nvml_err(nv, ret, eb, sizeof eb));
      st = wg__meter_add(m, &s);
      continue;
    }
    if (nv->api.get_name && nv->api.get_name(s.dev, model, sizeof model) == WG__NVML_SUCCESS)
      model[sizeof model - 1] = '\0';
    else
      model[0] = '\0';
    unsigned long long mj = 0;
    unsigned int mw = 0;
    int e = nv->api.get_energy ? nv->api.get_energy(s.dev, &mj) : WG__NVML_ERROR_NOT_SUPPORTED;
    if (e == WG__NVML_SUCCESS) {
      s.method = WG__NVML_ENERGY;
      compose_name(s.name, sizeof s.name, i, model, "");
    } else {
      int p = nv->api.get_power ? nv->api.get_power(s.dev, &mw) : WG__NVML_ERROR_NOT_SUPPORTED;
      if (p == WG__NVML_SUCCESS) {
        s.method = WG__NVML_POWER;
        compose_name(s.name, sizeof s.name, i, model, " (power-integrated)");
      } else {
        compose_name(s.name, sizeof s.name, i, model, "");
        wg__fmt(s.why, sizeof s.why,
                 "neither energy counter (%s) nor power reading (%s) is supported",
                 nvml_err(nv, e, eb, sizeof eb), nvml_err(nv, p, eb2, sizeof eb2));
      }
    }
    s.available = s.method != WG__NONE;
    usable += s.available;
    st = wg__meter_add(m, &s);
  }
  if (!usable) wg__nvml_close(nv); /* nothing will call it again */
  return st;
}

int wg__nvml_energy_mj(wg_meter_t *m, const wg__source *s, uint64_t *mj,
                       char *why, size_t cap) {
  char eb[32];
  unsigned long long v = 0;
  int ret = m->nvml.api.get_energy(s->dev, &v);
  if (ret != WG__NVML_SUCCESS) {
    wg__fmt(why, cap, "read error: nvmlDeviceGetTotalEnergyConsumption: %s",
             nvml_err(&m->nvml, ret, eb, sizeof eb));
    return -1;
  }
  *mj = (uint64_t)v;
  return 0;
}

int wg__nvml_power_w(wg_meter_t *m, const wg__source *s, double *watts,
                     char *why, size_t cap) {
  char eb[32];
  unsigned int mw = 0;
  int ret = m->nvml.api.get_power(s->dev, &mw);
  if (ret != WG__NVML_SUCCESS) {
    wg__fmt(why, cap, "read error: nvmlDeviceGetPowerUsage: %s",
             nvml_err(&m->nvml, ret, eb, sizeof eb));
    return -1;
  }
  *watts = (double)mw / 1e3;
  return 0;
}
