import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

extension CachingProxy {
    /// The HTTP/1.1 server as a swift-service-lifecycle `Service`, for a `ServiceGroup` of the
    /// caller's (alongside a metrics endpoint, say). `onListening` receives the bound port.
    public func makeServer(onListening: (@Sendable (Int) async -> Void)? = nil) throws -> any Service {
        // Idle connections are closed by an IdleStateHandler that the fast path watches: the
        // server's own idle timer does not see the requests answered on the event loop.
        let idleTimeout = configuration.idleTimeout
        var channelConfiguration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [AsyncResponseObserver(proxy: self, idleTimeout: idleTimeout)])
        // The parser's own limits sit above the proxy's, so that an oversized header section is
        // answered 431 by the proxy rather than 400 by the parser (up to twice the limit).
        let parserLimit = max(2 * configuration.maximumRequestHeaderBytes, 16 << 10)
        channelConfiguration.httpDecoder = .init(maxHeaderFieldSize: parserLimit, maxHeaderListSize: parserLimit)
        return try HTTPServerBuilder.http1(configuration: channelConfiguration).buildServer(
            configuration: ServerConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                availableConnectionsDelegate: MaximumAvailableConnections(
                    configuration.maximumConnections, logger: logger)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            responder: { [self] request, writer, channel in
                try await respond(to: request, writer: writer, client: channel.remoteAddress?.ipAddress)
            },
            onServerRunning: { channel in await onListening?(channel.localAddress?.port ?? 0) })
    }

    /// Runs the proxy until SIGTERM or SIGINT, then stops accepting connections and lets the
    /// requests in flight finish, for at most ``Configuration/shutdownTimeout`` before cancelling
    /// them.
    public func run(onListening: (@Sendable (Int) async -> Void)? = nil) async throws {
        let group = ServiceGroup(configuration: serviceGroupConfiguration([try makeServer(onListening: onListening)]))
        do {
            try await group.run()
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
    }

    /// The configuration of a swift-service-lifecycle `ServiceGroup` running `services` (the
    /// server ``makeServer(onListening:)`` makes, and any beside it) as ``run(onListening:)``
    /// runs the proxy: stopped gracefully by SIGTERM or SIGINT, what is still running cancelled
    /// ``Configuration/shutdownTimeout`` later.
    public func serviceGroupConfiguration(_ services: [any Service]) -> ServiceGroupConfiguration {
        var group = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .nanoseconds(configuration.shutdownTimeout.nanoseconds)
        return group
    }
}
