import NIOCore
import NIOPosix

/// A TCP server on 127.0.0.1 that speaks broken RESP, for the failure paths a real Redis cannot be
/// made to take: garbage, a connection closed in the middle of a reply, or no answer at all.
final class MisbehavingServer: Sendable {
    enum Behaviour: Sendable {
        case garbage
        case closeMidReply
        case silent
        /// Answers `CLIENT ID` with an id and every other command `+OK`, and sends `push` (raw RESP) after answering
        /// `CLIENT TRACKING`, as a tracking connection's server would send an invalidation.
        case pushAfterTracking(String)
        /// Answers each command (its arguments) with what `answer` returns (raw RESP): a server
        /// that reports whatever numbers a test needs.
        case scripted(@Sendable (_ command: [String]) -> String)
    }

    private let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    init(_ behaviour: Behaviour) async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Responder(behaviour: behaviour))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    func shutdown() async throws { try await channel.close() }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let behaviour: Behaviour
        /// What has arrived of a command not yet whole (``Behaviour/scripted(_:)``).
        private var received = ByteBuffer()

        init(behaviour: Behaviour) { self.behaviour = behaviour }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch behaviour {
            case .garbage:
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\n\r\n")), promise: nil)
            case .closeMidReply:
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "$100\r\nonly part of it")), promise: nil)
                context.close(promise: nil)
            case .silent:
                break
            case .pushAfterTracking(let push):
                let command = String(buffer: unwrapInboundIn(data))
                let isClientID = command.contains("\r\nID\r\n")
                context.write(wrapOutboundOut(ByteBuffer(string: isClientID ? ":7\r\n" : "+OK\r\n")), promise: nil)
                if command.contains("TRACKING") {
                    context.write(wrapOutboundOut(ByteBuffer(string: push)), promise: nil)
                }
                context.flush()
            case .scripted(let answer):
                var data = unwrapInboundIn(data)
                received.writeBuffer(&data)
                while let command = Self.nextCommand(&received) {
                    context.write(wrapOutboundOut(ByteBuffer(string: answer(command))), promise: nil)
                }
                context.flush()
            }
        }

        /// The first whole command (`*N`, then N bulk strings) in `buffer`, taken out of it; nil
        /// until one has arrived.
        private static func nextCommand(_ buffer: inout ByteBuffer) -> [String]? {
            let bytes = Array(buffer.readableBytesView)
            var index = 0
            func line() -> String? {
                guard index < bytes.count, let end = bytes[index...].firstIndex(of: UInt8(ascii: "\r")),
                    end + 1 < bytes.count
                else { return nil }
                defer { index = end + 2 }
                return String(decoding: bytes[index..<end], as: UTF8.self)
            }
            guard let header = line(), header.first == "*", let count = Int(header.dropFirst()) else { return nil }
            var command: [String] = []
            for _ in 0..<count {
                guard let length = line(), length.first == "$", let size = Int(length.dropFirst()),
                    index + size + 2 <= bytes.count
                else { return nil }
                command.append(String(decoding: bytes[index..<index + size], as: UTF8.self))
                index += size + 2
            }
            buffer.moveReaderIndex(forwardBy: index)
            return command
        }
    }
}
