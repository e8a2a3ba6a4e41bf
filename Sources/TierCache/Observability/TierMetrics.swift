import CoreMetrics

/// One tier's swift-metrics handles, created once with the tier (a handle per label and
/// dimension set, so that recording is a call on a handle, never a lookup by name).
final class TierMetrics: Sendable {
    let hits: Counter
    let misses: Counter
    let lookupDuration: CoreMetrics.Timer
    let stored: Counter
    let refusedTooLarge: Counter
    let refusedExpired: Counter
    let refusedOutOfSpace: Counter
    let refusedNotAdmitted: Counter
    let evictions: Counter
    let expirations: Counter
    let corruptionsRemoved: Counter
    let dictionaryMisses: Counter
    let unopenableRecords: Counter
    let unknownFormatRecords: Counter
    let recordsResealed: Counter
    let errors: Counter
    let storeResets: Counter
    let bytes: Gauge
    let entries: Gauge

    init(tierName: String, factory: any MetricsFactory) {
        let tier = [("tier", tierName)]
        func counter(_ label: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: label, dimensions: tier + extra, factory: factory)
        }
        hits = counter(MetricLabels.tierLookups, [("result", "hit")])
        misses = counter(MetricLabels.tierLookups, [("result", "miss")])
        lookupDuration = CoreMetrics.Timer(label: MetricLabels.tierLookupDuration, dimensions: tier, factory: factory)
        stored = counter(MetricLabels.tierStores, [("outcome", "stored")])
        refusedTooLarge = counter(MetricLabels.tierStores, [("outcome", "too_large")])
        refusedExpired = counter(MetricLabels.tierStores, [("outcome", "expired")])
        refusedOutOfSpace = counter(MetricLabels.tierStores, [("outcome", "out_of_space")])
        refusedNotAdmitted = counter(MetricLabels.tierStores, [("outcome", "not_admitted")])
        evictions = counter(MetricLabels.tierEvictions)
        expirations = counter(MetricLabels.tierExpirations)
        corruptionsRemoved = counter(MetricLabels.tierCorruptionsRemoved)
        dictionaryMisses = counter(MetricLabels.tierUnreadableRecords, [("reason", "missing_dictionary")])
        unopenableRecords = counter(MetricLabels.tierUnreadableRecords, [("reason", "unopenable")])
        unknownFormatRecords = counter(MetricLabels.tierUnreadableRecords, [("reason", "unknown_format")])
        recordsResealed = counter(MetricLabels.tierRecordsResealed)
        errors = counter(MetricLabels.tierErrors)
        storeResets = counter(MetricLabels.tierStoreResets)
        bytes = Gauge(label: MetricLabels.tierBytes, dimensions: tier, factory: factory)
        entries = Gauge(label: MetricLabels.tierEntries, dimensions: tier, factory: factory)
    }
}
