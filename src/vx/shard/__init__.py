"""Sharding one run across CI machines: which shard this is, the plan digest, the deal, the
record the shards of one CI run compare. Pure over ids, keys and costs; the run wires it in."""
