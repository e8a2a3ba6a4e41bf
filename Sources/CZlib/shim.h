#ifndef TIERCACHE_CZLIB_SHIM_H
#define TIERCACHE_CZLIB_SHIM_H
#include <zlib.h>
#endif
