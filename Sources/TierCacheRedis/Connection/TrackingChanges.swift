/// What a data connection knows of its own `CLIENT TRACKING` commands (see ``TrackingRedirect``):
/// the generation it last sent, how many are unanswered, and whether the last one answered was a
/// refused redirect.
///
/// Replies come in the order commands were sent, so the last tracking change answered decides
/// for every reply behind it: after a refused redirect, a read's reply is untracked and is not
/// delivered; after an accepted change, it is. A refusal is lifted only by a later change's
/// answer, never when that change is sent: the commands sent between the two still sit behind
/// the refusal.
struct TrackingChanges {
    /// The ``TrackingRedirect/generation`` last sent.
    private var generation = 0
    /// The changes sent and not yet answered.
    private var unanswered = 0
    /// The server's refusal of the last redirect answered, while no later change has been.
    private(set) var refusal: String?
    /// Whether the last change answered was an accepted redirect: the server tracks the keys this
    /// connection reads (until ``forgetRedirect()``).
    private(set) var isRedirected = false

    /// Whether a command sent now must be preceded by a tracking change, because the targets
    /// changed to `current` since the last one sent; counts it sent when so.
    mutating func needsChange(toward current: Int) -> Bool {
        guard current != generation else { return false }
        generation = current
        unanswered += 1
        return true
    }

    /// The refusal a command sent now would sit behind for certain, so that it can be failed at
    /// once: none while a change is unanswered (its answer may lift the refusal).
    var standingRefusal: String? { unanswered == 0 ? refusal : nil }

    /// A tracking change was answered with `reply`. A refused `OFF` is no refusal: a server that
    /// refuses `CLIENT` (by ACL) never tracked the connection, and a read tracked for nobody is
    /// still right.
    mutating func answered(redirecting: Bool, _ reply: RESPValue) {
        unanswered = max(0, unanswered - 1)
        if redirecting, case .error(let message) = reply { refusal = message } else { refusal = nil }
        isRedirected = redirecting && refusal == nil
    }

    /// The connection closed, and the server with it forgot what it tracked for it.
    mutating func forgetRedirect() { isRedirected = false }

    /// The connection's pending commands were failed: no change is awaiting an answer.
    mutating func dropUnanswered() { unanswered = 0 }
}
