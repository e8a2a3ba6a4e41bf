import Testing

@testable import TierCacheEviction

/// The miniatures' sample test answers as `n % modulus == 0` does, for every modulus the climber
/// can choose and for numbers across the whole 64-bit range, edges included.
@Suite struct SampleTestTests {
    @Test(arguments: Array(UInt64(1)...130) + [1 << 20, 1_000_003, UInt64.max / 3, UInt64.max])
    func agreesWithTheRemainder(modulus: UInt64) {
        let test = SampleTest(modulus: modulus)
        var generator = SystemRandomNumberGenerator()
        var numbers: [UInt64] = [0, 1, modulus - 1, modulus, modulus &+ 1, UInt64.max, UInt64.max - 1]
        numbers += (1...4).map { modulus &* $0 }
        numbers += (0..<2_000).map { _ in generator.next() }
        numbers += (0..<2_000).map { _ in UInt64.random(in: 0...10_000, using: &generator) }
        for n in numbers {
            #expect(test.isMultiple(n) == (n % modulus == 0), "\(n) mod \(modulus)")
        }
    }
}
