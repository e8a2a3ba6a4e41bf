import ServiceLifecycle

/// A server wrapped so that a failure names the option and address it was started for: "could
/// not serve --metrics on 127.0.0.1:9100: … Address already in use" instead of a bare NIO error.
struct NamedEndpoint: Service {
    let option: String
    let address: String
    let server: any Service

    func run() async throws {
        do {
            try await server.run()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw EndpointFailure(option: option, address: address, underlying: error)
        }
    }
}

/// Why an endpoint stopped: usually that its address could not be bound.
struct EndpointFailure: Error, CustomStringConvertible {
    let option: String
    let address: String
    let underlying: any Error
    var description: String { "could not serve \(option) on \(address): \(underlying)" }
}
