package validate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// ParseSampleFreq reads sample_freq, "N" or "N%" with N >= 0, as
// nats-server does ("" is 0: no sampling). Values over 100 sample every ack.
func ParseSampleFreq(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("negative sampling frequency %d", n)
	}
	return n, nil
}

// CheckSampleFreq refuses a sample_freq nats-server refuses.
func CheckSampleFreq(cfg *api.ConsumerConfig) *api.ApiError {
	if _, err := ParseSampleFreq(cfg.SampleFrequency); err != nil {
		return api.Errorf(api.ErrConsumerInvalidSampling, "failed to parse consumer sampling configuration: %v", err)
	}
	return nil
}
