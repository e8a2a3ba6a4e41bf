import ArgumentParser
import CLMDB
import Foundation

/// Holds one LMDB read transaction open on a store until standard input closes, for the test
/// of a map that stays full: the pages of the snapshot it reads cannot be reused by writers in
/// the meantime, as with a long-running reader in another process.
struct HoldReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold-reader",
        abstract: "Hold a read transaction on a store until standard input closes (for tests).")

    @Argument var directory: String

    func run() throws {
        var environment: OpaquePointer?
        guard mdb_env_create(&environment) == MDB_SUCCESS, let environment else {
            throw ValidationError("mdb_env_create failed")
        }
        defer { mdb_env_close(environment) }
        mdb_env_set_maxdbs(environment, 8)
        let opened = mdb_env_open(environment, directory, UInt32(MDB_RDONLY | MDB_NOTLS), 0o600)
        guard opened == MDB_SUCCESS else { throw ValidationError("mdb_env_open failed: \(opened)") }
        var transaction: OpaquePointer?
        let began = mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction)
        guard began == MDB_SUCCESS, let transaction else { throw ValidationError("mdb_txn_begin failed: \(began)") }
        defer { mdb_txn_abort(transaction) }
        FileHandle.standardOutput.write(Data("reading\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
    }
}
