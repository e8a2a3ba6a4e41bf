import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// Fills a disk tier (`--tier`) under a file-size limit (`RLIMIT_FSIZE`) until it refuses a store, checks
/// that everything stored reads back, lifts the limit and checks that storing works again without
/// reopening: the full-disk test where no small file system can be mounted.
///
/// Over the limit a write fails with `EFBIG`, once `SIGXFSZ` (which would kill the process) is
/// ignored, as it is here. An app that sets a file-size limit must ignore `SIGXFSZ` the same way;
/// the library installs no signal handlers of its own.
struct DiskFullProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disk-full-probe",
        abstract: "Fill a disk tier under a file-size limit, then lift it (for tests).")

    @Argument var directory: String
    @Option var fileSizeLimit = 2 << 20
    @Option var entryBytes = 32 << 10
    @Option(help: "The disk tier: lmdb or sqlite.")
    var tier = HarnessTier.lmdb

    func run() throws {
        #if canImport(Glibc)
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let original = limit
        limit.rlim_cur = rlim_t(fileSizeLimit)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else {
            throw ValidationError("setrlimit failed: \(errno)")
        }

        let tier = try self.tier.open(directory, capacity: 64 << 20).tier
        var stored: [Int] = []
        var refusal: String?
        for index in 0..<1000 {
            let outcome = try tier.store(entry(index), forKey: try CacheKey("full-\(index)"))
            if case .refused(.outOfSpace(let detail)) = outcome {
                refusal = detail
                break
            }
            guard outcome == .stored else { throw ValidationError("entry \(index): \(outcome)") }
            stored.append(index)
        }
        guard let refusal else {
            throw ValidationError("no store was refused under a \(fileSizeLimit)-byte file-size limit")
        }
        var readBack = 0
        for index in stored where try tier.entry(forKey: try CacheKey("full-\(index)"))?.value == entry(index).value {
            readBack += 1
        }
        // A removal on the full disk: when it returns, the entry is gone for every reader of the
        // store, not hidden in this one alone. (Another SQLite instance stands for another
        // process; LMDB shares one environment per store within a process, so for LMDB it does
        // not.)
        let removedKey = try CacheKey("full-\(stored[0])")
        var removal = "returned"
        do { try tier.removeEntry(forKey: removedKey) } catch { removal = "threw" }
        let elsewhere = try self.tier.open(directory, capacity: 64 << 20).tier
        let visibleElsewhere = try elsewhere.entry(forKey: removedKey) != nil
        // Space returns: the limit goes back to what it was; the same tier, not reopened, stores again.
        limit = original
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let again = try tier.store(entry(9999), forKey: try CacheKey("full-after"))
        let afterRead = try tier.entry(forKey: try CacheKey("full-after"))?.value == entry(9999).value
        let statistics = tier.statistics()
        print(
            "stored=\(stored.count) refusal=\"\(refusal)\" readBack=\(readBack) refusedOutOfSpace=\(statistics.refusedOutOfSpace) "
                + "removal=\(removal) visibleElsewhere=\(visibleElsewhere) "
                + "afterLimitLifted=\(again == .stored && afterRead ? "stored" : "\(again)")")
        #else
        throw ValidationError("disk-full-probe needs Linux (RLIMIT_FSIZE and SIGXFSZ as Glibc has them)")
        #endif
    }

    /// An incompressible value for `index` (zstd cannot shrink it, so the file grows by its size).
    private func entry(_ index: Int) -> CacheEntry {
        var state = UInt64(index) &+ 1
        let bytes = (0..<entryBytes).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        return CacheEntry(value: bytes, storedAt: Date(timeIntervalSince1970: 1_000))
    }
}
