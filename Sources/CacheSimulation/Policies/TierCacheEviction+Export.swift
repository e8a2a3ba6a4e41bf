// The policies live in TierCacheEviction, one implementation each, run by the simulator and by
// `MemoryTier` alike; `import CacheSimulation` brings them (and `EvictionPolicy`) along.
@_exported import TierCacheEviction
