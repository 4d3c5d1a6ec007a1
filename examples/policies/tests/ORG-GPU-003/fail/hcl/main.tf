provider "aws" {
  region                      = "ap-southeast-1"
  access_key                  = "AKIAFAKEFAKEFAKEFAKE"
  secret_key                  = "fakefakefakefakefakefakefakefakefakefake"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
}

resource "aws_instance" "trainer" {
  ami           = "ami-0c55b159cbfafe1f0"
  instance_type = "g5.xlarge"
}
