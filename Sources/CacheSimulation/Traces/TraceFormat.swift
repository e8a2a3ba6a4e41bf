/// The trace formats TierCache reads. Each may be compressed with zstd, gzip or xz.
public enum TraceFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The ARC paper's `.lis` traces: `start_block n_blocks ignore request_no` per line, expanded
    /// into `n_blocks` consecutive requests for 512-byte pages.
    case arc
    /// The LIRS paper's traces: one integer block number per line; `*` marker lines and blank lines
    /// are not requests.
    case lirs
    /// cache2k's traces: big-endian signed 32-bit keys, one per request.
    case cache2k
    /// libCacheSim's `oracleGeneral` binary: 24-byte little-endian records
    /// `uint32 time, uint64 obj_id, uint32 size, int64 next_access_vtime`. A record of size 0 is
    /// not a request, as libCacheSim reads it by default (`ignore_size_zero_req`).
    case oracleGeneral = "oracle-general"
    /// CSV with a header line naming its columns: the key column is the first of `obj_id`, `key`,
    /// `lbn` and `id` (in that order) that the header names;
    /// optional `size`/`obj_size` and `time`/`timestamp` columns. libCacheSim's CSV traces read as is.
    /// A record of size 0 is not a request (as libCacheSim reads it); a time that is not a whole
    /// number reads as 0 (replays do not use times).
    case csv
    /// TierCache's plain format for users' own traces: `key[,size[,timestamp]]` per line, or
    /// `key size [timestamp]` separated by spaces or tabs when the first request is laid out so
    /// (no comma, integers after the key; otherwise a key may hold spaces), every line with a
    /// size or none (then the trace has no sizes). A key that is a decimal integer without leading
    /// zeros is used as is; any other key is hashed (FNV-1a, 64 bits), so `007` and `7` are two
    /// objects. A timestamp may have a fraction (`1700000000.25`), which is dropped. Blank lines
    /// and lines starting with `#` are skipped.
    case plain

    /// The format as the command line names it.
    public var description: String { rawValue }

    /// Whether requests of this format can carry object sizes (ARC pages count as 512 bytes each).
    /// A CSV or plain trace may have none: whether a given file does is
    /// ``TraceReader/requestsCarrySizes()``.
    public var hasSizes: Bool {
        switch self {
        case .arc, .oracleGeneral, .csv, .plain: return true
        case .lirs, .cache2k: return false
        }
    }

    /// Guesses the format from a file name: `.lis` is ARC, `.csv` is CSV, `.txt` is plain (a
    /// `x.oracleGeneral.txt` dump too), an `oracleGeneral` part (`x.oracleGeneral.bin`,
    /// `x.oracleGeneral`) is libCacheSim's binary, `.trace.xz` is cache2k, `.trace` (optionally
    /// `.gz`) is LIRS. libCacheSim's other binaries, such as `oracleGeneralOpNS` (27-byte
    /// records), are no guess: their records would be misread.
    public static func guess(fromFileName path: String) -> TraceFormat? {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        if file.hasSuffix(".trace.xz") { return .cache2k }
        var base = Substring(file)
        for suffix in [".zst", ".gz", ".xz"] where base.hasSuffix(suffix) {
            base = base.dropLast(suffix.count)
            break
        }
        if base.hasSuffix(".lis") { return .arc }
        // Text extensions before the `oracleGeneral` part: `w.oracleGeneral.txt` is a text dump
        // of a binary trace, and its lines read as 24-byte records were garbage.
        if base.hasSuffix(".csv") { return .csv }
        if base.hasSuffix(".txt") { return .plain }
        if base.split(separator: ".").contains("oracleGeneral") { return .oracleGeneral }
        if base.hasSuffix(".trace") { return .lirs }
        return nil
    }
}
