package listen

import dto "github.com/prometheus/client_model/go"

type (
	metricFamily = dto.MetricFamily
	metricSample = dto.Metric
)
