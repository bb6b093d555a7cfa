{{/*
Shared templates of the lab-made charts (lab/charts/_shared/templates, copied into each at build
time). Objects only: in the lab no pod ever runs.
*/}}
{{- define "lab.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lab.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "lab.labels" -}}
{{ include "lab.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
lab.c5c3.io/made: "true"
{{- end -}}

{{- define "lab.serviceAccountName" -}}
{{- default (include "lab.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}
