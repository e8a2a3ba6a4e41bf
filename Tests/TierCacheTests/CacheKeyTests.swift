import Foundation
import Testing
import TierCache

@Suite("CacheKey")
struct CacheKeyTests {
    @Test("Empty and overlong keys are refused with invalidKey")
    func refused() {
        for text in ["", String(repeating: "k", count: CacheKey.maximumUTF8Length + 1)] {
            let error = #expect(throws: TierCacheError.self) { try CacheKey(text) }
            #expect(error?.code == .invalidKey)
        }
        #expect((try? CacheKey(String(repeating: "k", count: CacheKey.maximumUTF8Length))) != nil)
        // The limit counts UTF-8 bytes, not characters.
        #expect((try? CacheKey(String(repeating: "é", count: CacheKey.maximumUTF8Length / 2))) != nil)
        #expect(throws: TierCacheError.self) {
            try CacheKey(String(repeating: "é", count: CacheKey.maximumUTF8Length / 2 + 1))
        }
    }

    @Test("A key beside another is the two joined while they fit")
    func appendingFits() throws {
        let base = try CacheKey("GET https://example.com/a")
        #expect(CacheKey(base, appending: "\u{1F}head").rawValue == "GET https://example.com/a\u{1F}head")
    }

    @Test("Beyond the limit the base is digested; distinct bases and suffixes stay distinct and valid")
    func appendingOverflows() throws {
        let longA = try CacheKey(String(repeating: "a", count: CacheKey.maximumUTF8Length))
        let longB = try CacheKey(String(repeating: "a", count: CacheKey.maximumUTF8Length - 1) + "b")
        let keys = [
            CacheKey(longA, appending: "\u{1F}head"), CacheKey(longB, appending: "\u{1F}head"),
            CacheKey(longA, appending: "\u{1F}partial"),
            CacheKey(longA, appending: String(repeating: "s", count: CacheKey.maximumUTF8Length)),
            CacheKey(longA, appending: String(repeating: "t", count: CacheKey.maximumUTF8Length)),
        ]
        #expect(Set(keys).count == keys.count)
        for key in keys {
            #expect(key.rawValue.hasPrefix("#"))
            #expect(key.rawValue.utf8.count <= CacheKey.maximumUTF8Length)
            #expect((try? CacheKey(key.rawValue)) == key, "a derived key is a valid key")
        }
    }

    @Test("A digest key is 33 bytes whatever the data's length, and tells data apart")
    func digest() {
        let short = CacheKey(digestOf: [1, 2, 3])
        let long = CacheKey(digestOf: [UInt8](repeating: 7, count: 1 << 20))
        #expect(short.rawValue.utf8.count == 33 && long.rawValue.utf8.count == 33)
        #expect(short != CacheKey(digestOf: [1, 2, 4]))
        #expect(short == CacheKey(digestOf: [1, 2, 3]))
    }

    @Test("Keys of the same text are equal and hash alike, however they were made")
    func hashingFollowsText() throws {
        let base = try CacheKey("GET https://example.com/a")
        let joined = CacheKey(base, appending: "?b")
        let direct = try CacheKey("GET https://example.com/a?b")
        #expect(joined == direct)
        #expect(joined.hashValue == direct.hashValue)
        #expect(Set([joined, direct]).count == 1)
        // A key is its UTF-8 bytes, as in the tiers that store bytes: canonically equivalent
        // texts (which `String` calls equal) are two keys. As one key in the memory tier and two
        // on disk, removing one spelling left the other's entry below, to come back.
        let composed = try CacheKey("caf\u{E9}")
        let decomposed = try CacheKey("cafe\u{301}")
        #expect(composed != decomposed)
        #expect([composed: 1][decomposed] == nil)
        let memory = try MemoryTier(capacity: 1 << 20)
        _ = memory.store(CacheEntry(value: [1], storedAt: Date()), forKey: composed)
        _ = memory.store(CacheEntry(value: [2], storedAt: Date()), forKey: decomposed)
        memory.removeEntry(forKey: decomposed)
        #expect(memory.entry(forKey: composed)?.value == [1])
        #expect(memory.entry(forKey: decomposed) == nil)
        let digest = CacheKey(digestOf: [1, 2, 3])
        #expect(try CacheKey(digest.rawValue) == digest)
        #expect(try CacheKey(digest.rawValue).hashValue == digest.hashValue)
        // Different texts are different keys.
        #expect(base != direct)
        let many = try (0..<1_000).map { try CacheKey("key-\($0)") }
        #expect(Set(many).count == 1_000)
    }
}
