import CoreMetrics

extension MetricsSystem {
    /// The factory a cache records through: `explicit` if given, else the one the process
    /// bootstrapped; `nil` when that is the no-op factory, so that a process that bootstrapped
    /// nothing pays one branch per event and never calls a handler.
    package static func resolving(_ explicit: (any MetricsFactory)?) -> (any MetricsFactory)? {
        let factory = explicit ?? MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }
}
