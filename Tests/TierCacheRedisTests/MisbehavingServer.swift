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
            }
        }
    }
}
