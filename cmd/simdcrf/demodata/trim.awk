# Keep the first N sentences; keep # sent_id and # text comments; blank columns 6-10.
BEGIN { FS = OFS = "\t"; n = 0 }
/^# sent_id/ { if (N && n >= N) exit; print; next }
/^# text/ { print; next }
/^#/ { next }
/^$/ { print; n++; next }
{ print $1, $2, $3, $4, $5, "_", "_", "_", "_", "_" }
