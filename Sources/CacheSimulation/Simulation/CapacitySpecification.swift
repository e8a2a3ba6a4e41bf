import TierCache

/// A capacity as people write it: `10%` of the trace's footprint, `50000` objects, or `64MiB`.
///
/// Percentages resolve against the footprint in the simulation's unit (distinct objects, or the
/// bytes of all distinct objects). A size with a unit, in any form `TierCache`'s `ByteCount` reads
/// (`64MiB`, `1.5GB`, `2TiB`), asks for byte mode; a bare number counts objects.
public enum CapacitySpecification: Sendable, Hashable, CustomStringConvertible {
    /// A share of the footprint, from 0 to 1 (`10%` is `fraction(0.1)`); resolved by rounding down,
    /// to at least 1 (NaN and negative shares too).
    case fraction(Double)
    /// A number of objects.
    case objects(UInt64)
    /// A number of bytes (byte mode: each object costs its size).
    case bytes(UInt64)

    /// A capacity written in a form this type does not read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text as given.
        public let text: String
        /// What was wrong and the forms that work.
        public var description: String {
            "\"\(text)\" is not a capacity: write a percentage of the footprint (10%), a number of objects (50000) "
                + "or a size with a unit (512KiB, 64MiB, 1.5GB, 2TiB)"
        }
    }

    /// Parses one capacity.
    public init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasSuffix("%") {
            guard let percent = Double(trimmed.dropLast()), percent > 0, percent <= 100 else {
                throw ParseError(text: text)
            }
            self = .fraction(percent / 100)
            return
        }
        // A size has a unit (a letter at its end); a bare number counts objects.
        if trimmed.last?.isLetter == true {
            guard let size = try? ByteCount(parsing: trimmed), size.bytes > 0 else { throw ParseError(text: text) }
            self = .bytes(UInt64(size.bytes))
            return
        }
        guard let count = UInt64(trimmed), count > 0 else { throw ParseError(text: text) }
        self = .objects(count)
    }

    /// Parses a comma-separated list (`1%,10%,50000`).
    public static func parseList(_ text: String) throws(ParseError) -> [CapacitySpecification] {
        var result: [CapacitySpecification] = []
        for part in text.split(separator: ",") where !part.trimmingWhitespace().isEmpty {
            result.append(try CapacitySpecification(parsing: String(part)))
        }
        guard !result.isEmpty else { throw ParseError(text: text) }
        return result
    }

    /// The unit this capacity asks for, if it asks for one.
    public var impliedUnit: CapacityUnit? {
        switch self {
        case .fraction: nil
        case .objects: .objects
        case .bytes: .bytes
        }
    }

    /// The capacity in the given unit for a trace (at least 1).
    ///
    /// A percentage of the footprint is rounded down, as libCacheSim and Caffeine's simulator do
    /// (0.1% of 186,880 objects is 186), so capacities compare cell by cell with theirs. The
    /// product gets a relative nudge of 1e-12 first, so that a percentage whose decimal value is
    /// whole (29% of 100) is not one short for binary rounding (28.999999999999996).
    public func resolve(for trace: Trace, unit: CapacityUnit) -> UInt64 {
        switch self {
        case .fraction(let fraction):
            let footprint = unit == .bytes ? Double(trace.footprintBytes) : Double(trace.objectCount)
            let capacity = (footprint * fraction * (1 + 1e-12)).rounded(.down)
            // Parsing gives 0...1, but the case can be made with any value: NaN, negative and
            // infinite shares must not trap in `UInt64(_:)`.
            guard capacity >= 1 else { return 1 }
            return capacity < 0x1p64 ? UInt64(capacity) : .max
        case .objects(let count): return count
        case .bytes(let bytes): return bytes
        }
    }

    /// The capacity as written on the command line.
    public var description: String {
        switch self {
        case .fraction(let fraction): "\(fraction * 100)%"
        case .objects(let count): "\(count)"
        case .bytes(let bytes): "\(bytes)B"
        }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
