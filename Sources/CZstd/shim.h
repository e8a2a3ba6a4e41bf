#ifndef TIERCACHE_CZSTD_SHIM_H
#define TIERCACHE_CZSTD_SHIM_H
#include <zstd.h>
#include <zdict.h>
#include <zstd_errors.h>
#endif
