{{/*
The agent's configuration file: configmap.yaml's, with .Values.config merged over it (as a dict).
*/}}
{{- define "npm-agent.config" -}}
{{- $cm := .Files.Get "files/configmap.yaml" | fromYaml -}}
{{- $file := index $cm.data "npm-agent.json" | fromJson -}}
{{- mustMergeOverwrite $file (deepCopy .Values.config) | toJson -}}
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
{{- toJson $rest -}}
{{- end -}}
