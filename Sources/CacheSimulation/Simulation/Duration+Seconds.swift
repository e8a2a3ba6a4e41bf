extension Duration {
    /// The duration in seconds, as reports state it.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
