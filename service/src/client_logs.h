// Routes k8s-client's log events (leader election, watches) into the service's structured log,
// their fields as fields. Must never turn a field into message text nor a string into a number.
#pragma once

namespace shardscaler::service {

// Installs the sink for the whole process; call once logging is configured.
void routeClientLogsToTelemetry();

}  // namespace shardscaler::service
