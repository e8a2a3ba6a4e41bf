extension Duration {
    /// The duration in seconds, as the commands print it.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
