package main

import (
	"testing"
	"time"
)

// TestFlexDefaults: --service-tier flex waits longer and retries more,
// unless the command line set the flag.
func TestFlexDefaults(t *testing.T) {
	for _, tc := range []struct {
		tier    string
		given   []string
		stall   time.Duration
		retries int
	}{
		{"flex", nil, flexStallTimeout, flexMaxRetries},
		{"flex", []string{"stall-timeout"}, time.Minute, flexMaxRetries},
		{"flex", []string{"max-retries"}, flexStallTimeout, 2},
		{"default", nil, time.Minute, 2},
		{"", nil, time.Minute, 2},
	} {
		c := &runCmd{ServiceTier: tc.tier, StallTimeout: time.Minute, MaxRetries: 2}
		for _, g := range tc.given {
			c.given.add(g)
		}
		c.flexDefaults()
		if c.StallTimeout != tc.stall || c.MaxRetries != tc.retries {
			t.Errorf("%q given %v: stall %v, retries %d; want %v, %d", tc.tier, tc.given, c.StallTimeout, c.MaxRetries, tc.stall, tc.retries)
		}
	}
}
