import Testing
import TierCache

@Suite("ByteCount: one way to read and print sizes")
struct ByteCountTests {
    static let acceptedForms: [(String, Int)] = [
        ("1048576", 1_048_576), ("0", 0), ("1048576B", 1_048_576), ("512KiB", 512 << 10), ("512KB", 512 << 10),
        ("512K", 512 << 10), ("512kib", 512 << 10), ("64MiB", 64 << 20), ("64 MB", 64 << 20), ("64m", 64 << 20),
        ("1.5GB", 1_610_612_736), ("1.5GiB", 1_610_612_736), ("1.5 G", 1_610_612_736), ("2TiB", 2 << 40),
        ("2TB", 2 << 40), ("0.5KiB", 512), ("1.0001KiB", 1024), (" 16MiB", 16 << 20),
    ]

    static let printed: [(Int, String)] = [
        (0, "0 B"), (512, "512 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (256 << 20, "256 MiB"),
        (150 << 20, "150 MiB"), ((3 << 30) / 2, "1.5 GiB"), (2 << 40, "2 TiB"), (-1536, "-1.5 KiB"),
        (Int.max, "8 EiB"),
    ]

    @Test("Every accepted form", arguments: acceptedForms)
    func accepted(text: String, bytes: Int) throws {
        #expect(try ByteCount(parsing: text).bytes == bytes)
        #expect(ByteCount(text)?.bytes == bytes)
    }

    @Test(
        "Bad input is an error that names the accepted forms",
        arguments: [
            "", " ", "MiB", "-1", "-1MiB", "1.5", "1.5B.", ".5MiB", "5.MiB", "1.2.3KiB", "12XB", "10%", "1e3",
            "9999999999TiB", "99999999999999999999", "nan", "inf GiB", "12 Mi B x",
        ])
    func rejected(text: String) {
        let error = #expect(throws: ByteCount.ParseError.self) { try ByteCount(parsing: text) }
        #expect(error?.text == text)
        #expect(error?.description.contains("512KiB, 64MiB, 1.5GB, 2TiB") == true)
        #expect(ByteCount(text) == nil)
    }

    @Test("Sizes print in binary units, one decimal below 100 of a unit", arguments: printed)
    func formatted(bytes: Int, text: String) {
        #expect(ByteCount.format(bytes) == text)
        #expect(ByteCount(bytes: bytes).description == text)
    }

    @Test("What is printed reads back", arguments: [1024, 1536, 64 << 20, 2 << 40])
    func roundTrip(bytes: Int) throws {
        #expect(try ByteCount(parsing: ByteCount.format(bytes)).bytes == bytes)
    }
}
