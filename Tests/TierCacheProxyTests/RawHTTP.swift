import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Bytes over a plain TCP connection to 127.0.0.1, for requests no well-behaved client sends.
enum RawHTTP {
    /// Sends `request` and returns what came back before the server closed the connection (or
    /// `readTimeout` seconds passed, or `readLimit` bytes arrived). The blocking socket calls run
    /// on a Dispatch thread: on the concurrency pool they would starve the in-process origin.
    static func exchange(
        port: Int, _ request: [UInt8], readTimeout: Int = 10, readLimit: Int? = nil
    ) async throws -> String {
        try await onDispatch {
            try blockingExchange(port: port, request, readTimeout: readTimeout, readLimit: readLimit)
        }
    }

    private static func blockingExchange(
        port: Int, _ request: [UInt8], readTimeout: Int, readLimit: Int?
    ) throws -> String {
        let socket = try connect(port: port, readTimeout: readTimeout)
        defer { close(socket) }
        try send(socket, request)
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let readLimit, received.count >= readLimit { break }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// A connected socket; with `receiveBuffer`, a receive buffer that small (set before
    /// connecting, so that the window the server sees stays small).
    static func connect(port: Int, readTimeout: Int = 10, receiveBuffer: Int32? = nil) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        if var size = receiveBuffer {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socket)
            throw POSIXError(.ECONNREFUSED)
        }
        return socket
    }

    /// Sends `request` whole, then waits for `beforeReading` before reading anything, then reads
    /// until the server closes, counting the bytes and keeping none (answers to hundreds of
    /// pipelined requests).
    static func bytesAnswered(
        port: Int, _ request: [UInt8], readTimeout: Int = 20, beforeReading: () async throws -> Void
    ) async throws -> Int {
        let socket = try connect(port: port, readTimeout: readTimeout)
        defer { close(socket) }
        try await onDispatch { try send(socket, request) }
        try await beforeReading()
        return try await onDispatch {
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while case let count = recv(socket, &buffer, buffer.count, 0), count > 0 { total += count }
            return total
        }
    }

    /// Sends `request` and reads the answer slowly, `slice` bytes every `pause` milliseconds
    /// through a small receive buffer (a client on a slow link), until the server closes the
    /// connection; returns the bytes read.
    static func bytesReadSlowly(port: Int, _ request: [UInt8], slice: Int, pause: UInt32) async throws -> Int {
        let socket = try connect(port: port, readTimeout: 20, receiveBuffer: 16 << 10)
        defer { close(socket) }
        try await onDispatch { try send(socket, request) }
        return try await onDispatch {
            var total = 0
            var buffer = [UInt8](repeating: 0, count: slice)
            while case let count = recv(socket, &buffer, buffer.count, Int32(MSG_WAITALL)), count > 0 {
                total += count
                usleep(pause * 1_000)  // pacing a slow client, not waiting for anything
            }
            return total
        }
    }

    /// Sends `request` through a small receive buffer, reads `first` bytes of the answer, runs
    /// `midway`, then reads until the server closes the connection; returns the bytes read.
    static func bytesRead(
        port: Int, _ request: [UInt8], first: Int, midway: @escaping @Sendable () -> Void
    ) async throws -> Int {
        let socket = try connect(port: port, readTimeout: 20, receiveBuffer: 16 << 10)
        defer { close(socket) }
        try await onDispatch { try send(socket, request) }
        return try await onDispatch {
            var buffer = [UInt8](repeating: 0, count: max(first, 1 << 16))
            var total = max(0, recv(socket, &buffer, first, Int32(MSG_WAITALL)))
            midway()
            while case let count = recv(socket, &buffer, buffer.count, 0), count > 0 { total += count }
            return total
        }
    }

    /// Sends `request` through a small receive buffer and reads the first `first` bytes of the
    /// answer; returns the socket, still open, for the caller to close (a client that stopped
    /// reading a long answer midway).
    static func stalledReader(port: Int, _ request: [UInt8], first: Int) async throws -> Int32 {
        let socket = try connect(port: port, readTimeout: 20, receiveBuffer: 16 << 10)
        do {
            return try await onDispatch {
                try send(socket, request)
                var buffer = [UInt8](repeating: 0, count: first)
                guard recv(socket, &buffer, first, Int32(MSG_WAITALL)) == first else { throw POSIXError(.EIO) }
                return socket
            }
        } catch {
            close(socket)
            throw error
        }
    }

    /// Sends `head` (which expects `100 Continue`) at once, waits for the interim answer (the
    /// server has the request then), runs `headSent`, then sends `body` a byte at a time, `pause`
    /// milliseconds apart, until it is all sent or the server closes the connection; returns how
    /// many bytes of the body were sent.
    static func bodyTrickled(
        port: Int, head: [UInt8], body: [UInt8], pause: UInt32, headSent: @escaping @Sendable () -> Void
    ) async throws -> Int {
        try await onDispatch {
            let socket = try connect(port: port)
            defer { close(socket) }
            try send(socket, head)
            var interim = [UInt8](repeating: 0, count: 256)
            guard recv(socket, &interim, interim.count, 0) > 0,
                String(decoding: interim, as: UTF8.self).hasPrefix("HTTP/1.1 100")
            else { throw POSIXError(.EPROTO) }
            headSent()
            return trickle(body, to: socket, pause: pause)
        }
    }

    /// Sends `request` a byte at a time, `pause` milliseconds apart (a slow-loris client), until
    /// it is all sent or the server closes the connection; returns how many bytes were sent.
    static func bytesTrickled(port: Int, _ request: [UInt8], pause: UInt32) async throws -> Int {
        try await onDispatch {
            let socket = try connect(port: port)
            defer { close(socket) }
            return trickle(request, to: socket, pause: pause)
        }
    }

    /// Sends `bytes` one at a time, `pause` milliseconds apart, until they are all sent or the
    /// server closes the connection; returns how many were sent.
    private static func trickle(_ bytes: [UInt8], to socket: Int32, pause: UInt32) -> Int {
        var probe = [UInt8](repeating: 0, count: 1)
        for (index, byte) in bytes.enumerated() {
            var byte = byte
            guard Glibc.send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 else { return index }
            usleep(pause * 1_000)  // pacing a slow client, not waiting for anything
            // Closed by the server: a read that does not block finds the end of the stream.
            if recv(socket, &probe, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) == 0 { return index + 1 }
        }
        return bytes.count
    }

    /// Sends `head`, reads what comes back within `interimTimeout` seconds (an interim response,
    /// or nothing), then sends `body` and reads until the server closes the connection.
    static func exchangeInTwoSteps(
        port: Int, head: [UInt8], body: [UInt8], interimTimeout: Int
    ) async throws -> (interim: String, final: String) {
        try await onDispatch {
            let socket = try connect(port: port, readTimeout: interimTimeout)
            defer { close(socket) }
            try send(socket, head)
            var buffer = [UInt8](repeating: 0, count: 65536)
            let interimCount = recv(socket, &buffer, buffer.count, 0)
            let interim = interimCount > 0 ? String(decoding: buffer[0..<interimCount], as: UTF8.self) : ""
            try send(socket, body)
            var final = [UInt8]()
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            while case let count = recv(socket, &buffer, buffer.count, 0), count > 0 { final += buffer[0..<count] }
            return (interim, String(decoding: final, as: UTF8.self))
        }
    }

    /// Sends `request` and reads until the server closes the connection (true) or `readTimeout`
    /// seconds pass without a byte (false).
    static func isClosed(port: Int, after request: [UInt8], readTimeout: Int = 20) async throws -> Bool {
        let socket = try connect(port: port, readTimeout: readTimeout)
        defer { close(socket) }
        try await onDispatch { try send(socket, request) }
        return try await onDispatch {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                if count > 0 { continue }
                return count == 0 || errno == ECONNRESET
            }
        }
    }

    /// Runs blocking socket calls on a Dispatch thread (see ``exchange(port:_:readTimeout:readLimit:)``).
    static func onDispatch<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    static func send(_ socket: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw POSIXError(.EPIPE) }
            offset += sent
        }
    }
}

/// A loopback port held bound but not listening for as long as this value lives: connecting to
/// it is refused, and nothing else can bind it meanwhile (choosing a free port and closing it
/// again races with every other test binding or connecting in parallel).
final class ReservedPort: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        self.socket = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}
