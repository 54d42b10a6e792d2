# declared input types and a per-file size
include default
inputs-types application/pdf .docx image/*
inputs-max-size 25M
inputs-size 100M
