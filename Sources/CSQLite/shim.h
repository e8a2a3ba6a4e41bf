#ifndef TIERCACHE_CSQLITE_SHIM_H
#define TIERCACHE_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import as a macro:
// binding with it makes SQLite copy the bytes before the call returns.
static inline int tiercache_sqlite3_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}

// Reads `count` bytes from the start of the main database file through the connection's own file
// handle: a descriptor opened and closed beside SQLite's would, on closing, drop every POSIX lock
// the process holds on the file, the locks SQLite's connections rely on. SQLITE_IOERR_SHORT_READ
// for a shorter file (the rest zero-filled).
static inline int tiercache_sqlite3_read_main_file(sqlite3 *db, void *buffer, int count) {
    sqlite3_file *file = 0;
    int status = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (status != SQLITE_OK || file == 0 || file->pMethods == 0) return SQLITE_ERROR;
    return file->pMethods->xRead(file, buffer, count, 0);
}

// sqlite3_db_config is variadic, which Swift cannot call: these wrappers call it with each option's
// arguments.

// Defensive mode: no writes to the schema table or other ways to corrupt the file on purpose.
static inline void tiercache_sqlite3_enable_defensive(sqlite3 *db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

// Turns the reset flag on (1) or off (0): with it on, VACUUM empties the database, damaged or not.
static inline void tiercache_sqlite3_reset_database(sqlite3 *db, int on) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, (int *)0);
}
#endif
