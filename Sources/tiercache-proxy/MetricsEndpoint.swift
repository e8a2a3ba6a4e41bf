import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

/// A small HTTP server answering `GET /metrics` with the Prometheus text format.
struct MetricsEndpoint: Sendable {
    let host: String
    let port: Int
    let registry: PrometheusCollectorRegistry
    let logger: Logger

    /// `onListening` receives the bound port (the one asked for, or the one picked for port 0).
    func makeServer(onListening: @escaping @Sendable (Int) -> Void) throws -> any Service {
        try HTTPServerBuilder.http1().buildServer(
            configuration: ServerConfiguration(address: .hostname(host, port: port)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            responder: { [registry] request, writer, _ in
                guard request.head.method == .get, request.head.path == "/metrics" else {
                    try await writer.writeResponse(HTTPResponse(status: .notFound, headerFields: [.contentLength: "0"]))
                    return
                }
                let text = registry.emitToBuffer()
                try await writer.write(
                    response: HTTPResponse(
                        status: .ok,
                        headerFields: [
                            .contentType: "text/plain; version=0.0.4", .contentLength: String(text.count),
                        ]),
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
            },
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) })
    }
}
