{{/*
The agent's configuration file as configmap.yaml ships it (a dict, as JSON).
*/}}
{{- define "npm-agent.shippedConfig" -}}
{{- index (.Files.Get "files/configmap.yaml" | fromYaml).data "npm-agent.json" | fromJson | toJson -}}
{{- end -}}

{{/*
The agent's configuration file: the shipped one with .Values.config merged over it (a dict, as JSON).
*/}}
{{- define "npm-agent.config" -}}
{{- mustMergeOverwrite (include "npm-agent.shippedConfig" . | fromJson) (deepCopy .Values.config) | toJson -}}
{{- end -}}

{{/*
The keys the agent applies only at a start: the configuration without those it reloads live (AgentConfig's
live keys), as JSON, for the DaemonSet's restart annotation.
*/}}
{{- define "npm-agent.restartConfig" -}}
{{- $config := fromJson . -}}
{{- $toggles := omit (get $config "Toggles" | default dict) "NetPolInBackground" -}}
{{- $rest := omit $config "Toggles" "NetPolAdaptiveBatching" "MaxPendingNetPols" "NetPolIntervalInMilliseconds" "NetPolInBackground" "LogLevel" -}}
{{- $_ := set $rest "Toggles" $toggles -}}
{{- $flows := omit (get $config "Flows" | default dict) "Denied" "Allowed" "RatePerSecond" "IntervalSeconds" "Events" -}}
{{- $_ := set $rest "Flows" $flows -}}
{{- toJson $rest -}}
{{- end -}}
