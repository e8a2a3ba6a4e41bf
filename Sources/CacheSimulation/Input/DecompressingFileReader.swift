#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file's bytes in chunks, decompressing zstd, gzip or xz on the fly.
///
/// The codec is chosen by the file's magic number, not its name, so a renamed file still reads.
/// Memory stays bounded by two fixed buffers however large the trace is.
final class DecompressingFileReader {
    let path: String
    private let descriptor: Int32
    private var decoder: any StreamDecoder
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd = 0
    private var endOfFile = false

    // Small enough to stay out of the way of small files (and of AddressSanitizer's large-allocation path,
    // which maps fresh pages every time), large enough that a read or a decompression call per chunk
    // costs nothing measurable beside parsing.
    static let chunkSize = 1 << 15

    init(path: String) throws(TraceError) {
        self.path = path
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw TraceError(file: path, reason: .unreadable(String(cString: strerror(errno))))
        }
        self.descriptor = descriptor
        self.input = [UInt8](repeating: 0, count: Self.chunkSize)
        self.decoder = PassthroughDecoder()
        do {
            try refill()
            decoder = try Self.decoder(forMagic: input[inputStart..<inputEnd])
        } catch let error as TraceError {
            close(descriptor)
            throw error
        } catch let reason as TraceError.Reason {
            close(descriptor)
            throw TraceError(file: path, reason: reason)
        } catch {
            close(descriptor)
            throw TraceError(file: path, reason: .unreadable("\(error)"))
        }
    }

    deinit { close(descriptor) }

    private static func decoder(forMagic prefix: ArraySlice<UInt8>) throws(TraceError.Reason) -> any StreamDecoder {
        let bytes = Array(prefix.prefix(10))
        if bytes.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return try ZstdStreamDecoder() }
        if isGzipHeader(bytes) { return try GzipStreamDecoder() }
        if bytes.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return try XzStreamDecoder() }
        return PassthroughDecoder()
    }

    /// Whether `bytes` (a file's first ten) open a gzip member (RFC 1952 §2.3): the two magic
    /// bytes, deflate (8, the one method defined), no reserved flag and a deflate extra flag (0,
    /// 2 or 4). The magic bytes alone were not enough: a binary trace's first record begins with
    /// its own numbers, and an oracleGeneral trace whose first timestamp is 35,615 (`1F 8B 00
    /// 00`) was taken for gzip and refused as damaged, whatever format was named. (The operating
    /// system byte is not checked: zlib writes 19 on Apple platforms, past RFC 1952's list.)
    static func isGzipHeader(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 10 && bytes[0] == 0x1F && bytes[1] == 0x8B && bytes[2] == 8 && bytes[3] & 0xE0 == 0
            && [0, 2, 4].contains(bytes[8])
    }

    /// Fills `output` with decompressed bytes; returns 0 only at the end of the data.
    func read(into output: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        do {
            while true {
                if inputStart == inputEnd, !endOfFile { try refill() }
                let produced: Int
                let consumed: Int
                (consumed, produced) = try input.withUnsafeBytes { bytes throws(TraceError.Reason) in
                    try decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[inputStart..<inputEnd]), into: output)
                }
                inputStart += consumed
                if produced > 0 { return produced }
                if inputStart == inputEnd, endOfFile {
                    try decoder.finish()
                    return 0
                }
                if consumed == 0, inputStart < inputEnd {
                    throw TraceError.Reason.decompression("the decoder made no progress")
                }
            }
        } catch let error as TraceError {
            throw error
        } catch let reason as TraceError.Reason {
            throw TraceError(file: path, reason: reason)
        } catch {
            throw TraceError(file: path, reason: .unreadable("\(error)"))
        }
    }

    private func refill() throws(TraceError) {
        let count = input.withUnsafeMutableBytes { buffer in
            readRetryingInterrupts(descriptor, buffer.baseAddress, buffer.count)
        }
        guard count >= 0 else {
            throw TraceError(file: path, reason: .unreadable(String(cString: strerror(errno))))
        }
        inputStart = 0
        inputEnd = count
        endOfFile = count == 0
    }
}

/// `read(2)`, retried when a signal interrupts it.
private func readRetryingInterrupts(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    while true {
        let result = read(descriptor, buffer, count)
        if result < 0, errno == EINTR { continue }
        return result
    }
}
