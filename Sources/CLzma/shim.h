#ifndef TIERCACHE_CLZMA_SHIM_H
#define TIERCACHE_CLZMA_SHIM_H
#include <lzma.h>
#endif
