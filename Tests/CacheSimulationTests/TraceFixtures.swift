import CacheSimulation
import Foundation

/// Small trace files written to a temporary directory for reader tests.
struct TraceFixtures {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-traces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func write(_ name: String, text: String) throws -> String { try write(name, Array(text.utf8)) }

    /// `7 * 8\r\n (blank) 7 9` as LIRS text, gzip-compressed (made with `gzip -9`).
    static let lirsGzip = Array(
        Data(base64Encoded: "H4sICLpvAmsCA2xpcnMudHJhY2UAM+fS4rLg5eIy57LkAgBCa3RmDAAAAA==") ?? Data())
    /// ``arcXz``'s text in a stream whose header names a dictionary of 3 GiB (Python's `lzma`,
    /// the block header's property byte set to 39 and its CRC32 made again): decodable with that
    /// much memory, refused within the decoder's limit.
    static let arcXzHugeDictionary = Array(
        Data(
            base64Encoded:
                "/Td6WFoAAAFpIt42AgAhAScAAACwsHLr4AAbABhdABiMLEA1sOhJayqYjL5PT6ZMwgGDbL4LgAAOiuwJAAEwHJffweuQQpkNAQAAAAABWVo="
        ) ?? Data())
    /// `100 3 0 1`, `5 1 0 2`, `100 1 0 3` as ARC text, xz-compressed (made with `xz`).
    static let arcXz = Array(
        Data(
            base64Encoded:
                "/Td6WFoAAATm1rRGAgAhARYAAAB0L+Wj4AAbABhdABiMLEA1sOhJayqYjL5PT6ZMwgGDbL4LgAC8F+lZg4sTiQABNByTGq2PH7bzfQEAAAAABFla"
        ) ?? Data())
    /// The same ARC text, zstd-compressed (made with `zstd`).
    static let arcZstd = Array(
        Data(base64Encoded: "KLUv/SQc4QAAMTAwIDMgMCAxCjUgMSAwIDIKMTAwIDEgMCAzCvlcNjI=") ?? Data())

    /// Reads every request of a file.
    static func requests(_ path: String, format: TraceFormat? = nil) throws -> [TraceRequest] {
        var result: [TraceRequest] = []
        try TraceReader(path: path, format: format).forEach { result.append($0) }
        return result
    }
}
