import Testing

@testable import TierCacheRedis

/// What a data connection decides from its own `CLIENT TRACKING` replies: which later replies are
/// untracked, and when a command can be failed without sending it.
@Suite("Tracking changes of a data connection")
struct TrackingChangesTests {
    let refused = RESPValue.error("ERR The client ID you want redirect to does not exist")

    @Test("A change is sent once per generation")
    func oncePerGeneration() {
        var changes = TrackingChanges()
        let sent = [0, 1, 1, 2].map { changes.needsChange(toward: $0) }
        #expect(sent == [false, true, false, true], "none before the first targets, then one per generation")
    }

    @Test("A refused redirect stands until a later change is answered, not merely sent")
    func refusalStandsUntilLaterAnswer() {
        var changes = TrackingChanges()
        _ = changes.needsChange(toward: 1)
        changes.answered(redirecting: true, refused)
        #expect(changes.refusal != nil && changes.standingRefusal != nil, "commands sent now fail at once")

        _ = changes.needsChange(toward: 2)
        #expect(changes.refusal != nil, "the commands sent before the new change still sit behind the refusal")
        #expect(changes.standingRefusal == nil, "a command sent now waits for the new change's answer")
        changes.answered(redirecting: true, .simpleString("OK"))
        #expect(changes.refusal == nil && changes.standingRefusal == nil)
    }

    @Test("Two changes in flight: the second's acceptance lifts the first's refusal")
    func overlappingChanges() {
        var changes = TrackingChanges()
        _ = changes.needsChange(toward: 1)
        _ = changes.needsChange(toward: 2)
        changes.answered(redirecting: true, refused)
        #expect(changes.refusal != nil, "replies between the two changes are untracked")
        #expect(changes.standingRefusal == nil, "the second change is unanswered")
        changes.answered(redirecting: true, .simpleString("OK"))
        #expect(changes.refusal == nil && changes.standingRefusal == nil, "reads after it are delivered")
    }

    @Test("A refused OFF is no refusal; a connection that failed awaits no answer")
    func refusedOffAndFailure() {
        var changes = TrackingChanges()
        _ = changes.needsChange(toward: 1)
        changes.answered(redirecting: false, .error("NOPERM this user has no permissions to run the 'client' command"))
        #expect(changes.refusal == nil)

        _ = changes.needsChange(toward: 2)
        changes.answered(redirecting: true, refused)
        _ = changes.needsChange(toward: 3)
        changes.dropUnanswered()
        #expect(changes.standingRefusal != nil, "nothing will lift it: later commands fail at once")
    }
}
