/// Why a trace could not be read, naming the file and, where it applies, the record.
///
/// Trace readers never crash on bad input: a truncated download, a damaged archive or a line that is
/// not a number all end the read with one of these.
public struct TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Error, Sendable, Equatable {
        /// The file could not be opened or read.
        case unreadable(String)
        /// The compressed stream is damaged.
        case decompression(String)
        /// The data stops in the middle of a compressed frame or a binary record.
        case truncated(String)
        /// A record does not follow the format.
        case malformed(String)
        /// The format could not be told from the file name; pass one explicitly.
        case unknownFormat(String)
    }

    /// The trace file's path.
    public let file: String
    /// The 1-based line (text formats) or record (binary formats) where reading stopped, if any.
    public let record: Int?
    /// What went wrong.
    public let reason: Reason

    /// An error reading `file`, at `record` where it applies.
    public init(file: String, record: Int? = nil, reason: Reason) {
        self.file = file
        self.record = record
        self.reason = reason
    }

    /// The file, the record and what went wrong, for a person to read.
    public var description: String {
        let location = record.map { "\(file), record \($0)" } ?? file
        switch reason {
        case .unreadable(let detail): return "\(location): cannot read: \(detail)"
        case .decompression(let detail): return "\(location): damaged compressed data: \(detail)"
        case .truncated(let detail): return "\(location): truncated: \(detail)"
        case .malformed(let detail): return "\(location): \(detail)"
        case .unknownFormat(let detail): return "\(location): \(detail)"
        }
    }
}
