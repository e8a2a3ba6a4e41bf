#ifndef TIERCACHE_CLMDB_SHIM_H
#define TIERCACHE_CLMDB_SHIM_H
#include <lmdb.h>
#endif
