/// What a capacity counts.
public enum CapacityUnit: String, Sendable, Codable, CustomStringConvertible {
    /// Every object counts as one, whatever its size (the ARC and LIRS papers' unit).
    case objects
    /// Objects count by their size in bytes; needs a trace with sizes.
    case bytes

    /// The unit's name.
    public var description: String { rawValue }
}
