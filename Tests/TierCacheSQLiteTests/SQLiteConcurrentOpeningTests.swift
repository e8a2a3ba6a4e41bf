import DiskTestSupport
import Foundation
import Testing
import TierCacheSQLite

/// Several processes opening one new store at once (a fleet of workers started on an empty
/// directory): each sees the store whole or not at all, never half made.
@Suite("SQLiteTier opened by many processes at once")
struct SQLiteConcurrentOpeningTests {
    /// The opener read the file's application id, then its tables, in two reads: a store another
    /// process made between them read as id 0 with tables, another program's database
    /// (`foreignStore`, exit status 1). Seen once in a CI run of four processes for 4 seconds;
    /// here, four processes start on each of 60 new stores and stop at once (before the fix, one
    /// in a dozen stores had an opener fail).
    @Test("Four processes opening a new store together all open it")
    func openersOfANewStore() throws {
        let directory = TemporaryDirectory()
        let arguments = ["--tier", "sqlite", "--capacity", String(1 << 20), "--keys", "100", "--tasks", "1"]
        var failures: [String] = []
        for round in 0..<60 {
            let store = directory.url.appendingPathComponent("store-\(round)").path
            for (status, text) in try runStressWriters(
                store: store, processes: 4, seconds: "0.05", arguments: arguments)
            where status != 0 {
                failures.append(text)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) openings failed: \(failures.prefix(2))")
    }
}
