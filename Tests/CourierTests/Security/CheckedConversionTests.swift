import Foundation
import NIOCore
import Testing

@testable import Courier

/// ``CheckedConversion``: every `Double` a caller or a server chooses becomes clock units without a trap, and
/// integer sums report overflow instead of trapping.
@Suite struct CheckedConversionTests {
    static let maximum = CheckedConversion.maximumMilliseconds
    /// The longest interval in seconds, exactly: 100 years of 365 days.
    static let boundary: Double = 100 * 365 * 24 * 60 * 60

    @Test func maximumIsOneHundredYears() {
        #expect(Self.maximum == 3_153_600_000_000)
        #expect(Double(Self.maximum) == Self.boundary * 1000)
    }

    @Test(
        "Infinite and huge intervals are clamped to the maximum",
        arguments: [
            Double.infinity, 1e300, .greatestFiniteMagnitude, Double(Int64.max), 1e16, boundary + 1, boundary,
        ])
    func hugeIsClamped(_ seconds: Double) {
        #expect(CheckedConversion.milliseconds(seconds) == Self.maximum)
        #expect(CheckedConversion.duration(seconds) == .milliseconds(Self.maximum))
        #expect(CheckedConversion.nanoseconds(seconds) == UInt64(Self.maximum) * 1_000_000)
    }

    @Test(
        "NaN, negative and zero intervals are 0",
        arguments: [
            Double.nan, -Double.nan, .signalingNaN, -.infinity, -.greatestFiniteMagnitude, -1e300, -1, -0.001,
            -Double.leastNonzeroMagnitude, -0.0, 0,
        ])
    func nothingIsZero(_ seconds: Double) {
        #expect(CheckedConversion.milliseconds(seconds) == 0)
        #expect(CheckedConversion.duration(seconds) == .zero)
        #expect(CheckedConversion.nanoseconds(seconds) == 0)
    }

    /// Seconds and the whole milliseconds they make.
    static let ordinaryIntervals: [(Double, Int64)] = [
        (0.25, 250), (1, 1000), (60, 60_000), (0.0015, 1), (0.0009999, 0), (Double.leastNonzeroMagnitude, 0),
        (1e-300, 0), (1.9999, 1999), (boundary - 1, 3_153_599_999_000),
    ]

    @Test("Ordinary intervals become whole milliseconds, rounded toward zero", arguments: ordinaryIntervals)
    func ordinary(_ seconds: Double, _ milliseconds: Int64) {
        #expect(CheckedConversion.milliseconds(seconds) == milliseconds)
        #expect(CheckedConversion.duration(seconds) == .milliseconds(milliseconds))
        #expect(CheckedConversion.nanoseconds(seconds) == UInt64(milliseconds) * 1_000_000)
    }

    @Test("Just below the boundary stays below the maximum")
    func justBelowTheBoundary() {
        let milliseconds = CheckedConversion.milliseconds(Self.boundary.nextDown)
        #expect(milliseconds < Self.maximum)
        #expect(milliseconds >= Self.maximum - 1)
    }

    @Test("The clamped maximum fits NIO's nanosecond TimeAmount and clock arithmetic")
    func maximumFitsTheClocks() {
        let nanoseconds = Self.maximum.multipliedReportingOverflow(by: 1_000_000)
        #expect(!nanoseconds.overflow)
        #expect(
            TimeAmount.milliseconds(CheckedConversion.milliseconds(.infinity)).nanoseconds == nanoseconds.partialValue)
        let now = ContinuousClock.now
        #expect(now + CheckedConversion.duration(.infinity) > now)
        #expect(NIODeadline.now() + .milliseconds(CheckedConversion.milliseconds(1e300)) > NIODeadline.now())
    }

    /// Two addends and their sum.
    struct Sum: Sendable, CustomTestStringConvertible {
        var lhs: Int64
        var rhs: Int64
        var sum: Int64
        var testDescription: String { "\(lhs) + \(rhs)" }
    }

    @Test(
        "Sums that fit are exact",
        arguments: [
            Sum(lhs: .max, rhs: 0, sum: .max), Sum(lhs: .max - 1000, rhs: 1000, sum: .max),
            Sum(lhs: .min, rhs: .max, sum: -1), Sum(lhs: .min, rhs: 0, sum: .min), Sum(lhs: -5, rhs: 3, sum: -2),
            Sum(lhs: 0, rhs: 0, sum: 0),
        ])
    func sumFits(_ sum: Sum) {
        #expect(CheckedConversion.sum(sum.lhs, sum.rhs) == sum.sum)
        #expect(CheckedConversion.sum(sum.rhs, sum.lhs) == sum.sum)
    }

    /// Addends whose sum does not fit in `Int64`.
    static let overflowingSums: [(Int64, Int64)] = [
        (.max, 1), (1000, .max - 999), (.min, -1), (.max, .max), (.min, .min),
    ]

    @Test("Sums past Int64 are nil, never a trap", arguments: overflowingSums)
    func sumOverflows(_ lhs: Int64, _ rhs: Int64) {
        #expect(CheckedConversion.sum(lhs, rhs) == nil)
        #expect(CheckedConversion.sum(rhs, lhs) == nil)
    }
}
