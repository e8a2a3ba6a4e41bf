/// ASCII case folding on bytes: field values, directive names and URI parts are compared in any
/// case without a lowercased copy (several are compared on every request).
package enum ASCIICase {
    /// `byte` with `A`…`Z` folded to `a`…`z`; any other byte as it is.
    @inlinable
    package static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Whether `bytes` spell `lowercased` (lower-case ASCII) in any case.
    @inlinable
    package static func equals<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, ignoringCaseTo lowercased: StaticString
    ) -> Bool {
        lowercased.withUTF8Buffer { expected in
            expected.count == bytes.count && zip(expected, bytes).allSatisfy { $0 == lowercase($1) }
        }
    }
}
