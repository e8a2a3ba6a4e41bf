import CacheSimulation
import Foundation
import Synchronization
import Testing

/// The public traces in `../shared/traces`, located through `TIERCACHE_TRACES` (which `.ci/run` sets).
/// A fresh clone has no such folder: the tests that need it are disabled with this message.
enum SharedTraces {
    static let missingMessage: Comment =
        "TIERCACHE_TRACES is not set (or not a folder): the published-table tests need the public traces; `.ci/run` sets it when ../shared/traces exists"

    static var directory: URL? {
        guard let path = ProcessInfo.processInfo.environment["TIERCACHE_TRACES"], !path.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        return URL(fileURLWithPath: path)
    }

    static var available: Bool { directory != nil }

    static func path(_ relative: String) throws -> String {
        guard let directory else { throw MissingTraces() }
        return directory.appendingPathComponent(relative).path
    }

    private static let loaded = Mutex<[String: Trace]>([:])

    /// Loads a trace once per test process (several tests replay the same one).
    static func trace(_ relative: String) throws -> Trace {
        if let trace = loaded.withLock({ $0[relative] }) { return trace }
        let trace = try Trace.load(TraceReader(path: path(relative)))
        loaded.withLock { $0[relative] = trace }
        return trace
    }

    /// `paper_tables.json`: the ARC paper's published hit ratios.
    static func paperTables() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path("paper_tables.json")))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    struct MissingTraces: Error {}
}
